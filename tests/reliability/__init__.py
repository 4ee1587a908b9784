"""Reliability and safety proofs (issue 8): load, crashes, bad input, hostile content, files users own."""
