extension EdgeSnapper {
    /// The `count` nearest directed edges within `maxDistance` metres of `coordinate`, nearest first (both
    /// directions of a two-way street count as two).
    public func nearest(_ count: Int, to coordinate: RoadCoordinate, maxDistance: Double) -> [EdgeSnap] {
        Array(candidates(near: coordinate, maxDistance: maxDistance).prefix(count))
    }
}
