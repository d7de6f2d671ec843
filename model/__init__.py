"""Z3 encodings: symbolic transition relations, BMC, k-induction, differential checks."""
