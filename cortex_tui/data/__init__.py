"""What the operator app reads: the store target, loaded snapshots, and the text helpers that format them."""
