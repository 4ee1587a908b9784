"""Reliability and safety proofs: load, crashes, bad input, hostile content, files users own."""
