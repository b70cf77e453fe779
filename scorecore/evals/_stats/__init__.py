"""Pure statistics the batch results share: the seeded bootstrap, Krippendorff's alpha, κ, ρ, τ."""
