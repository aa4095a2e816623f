public import Routing

/// SplitMix64: a small deterministic generator for property and fault-injection tests, so a failing seed can be
/// replayed (the one `Routing` uses for its synthetic networks).
public typealias SeededRandom = SeededGenerator
