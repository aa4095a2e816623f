extension CarProfile {
    /// Which side of the road traffic keeps to; the far-side turn crosses oncoming traffic.
    public enum DrivingSide: Sendable, Hashable { case right, left }

    /// Seconds a turn costs. `angleDegrees` is the change of heading from the incoming to the outgoing edge:
    /// 0 straight on, positive to the right, negative to the left, ±180 back the way it came. A turn follows
    /// `turnCostTable` (linear between rows, near side cheaper than far side); beyond `uTurnThresholdDegrees`,
    /// or when `isUTurn` says so (same road back), it costs `uTurnSeconds`.
    public func turnCost(angleDegrees: Double, isUTurn: Bool = false, drivingSide: DrivingSide = .right) -> Double {
        guard angleDegrees.isFinite else { return uTurnSeconds }
        var angle = angleDegrees.truncatingRemainder(dividingBy: 360)
        if angle > 180 { angle -= 360 }
        if angle <= -180 { angle += 360 }
        let magnitude = abs(angle)
        if isUTurn || magnitude >= uTurnThresholdDegrees { return uTurnSeconds }
        let nearSide = (angle > 0) == (drivingSide == .right)
        guard let upper = turnCostTable.firstIndex(where: { $0.degrees >= magnitude }) else {
            let last = turnCostTable.last
            return (nearSide ? last?.nearSideSeconds : last?.farSideSeconds) ?? 0
        }
        let high = turnCostTable[upper]
        guard upper > 0 else { return nearSide ? high.nearSideSeconds : high.farSideSeconds }
        let low = turnCostTable[upper - 1]
        let t = (magnitude - low.degrees) / (high.degrees - low.degrees)
        let (a, b) = nearSide ? (low.nearSideSeconds, high.nearSideSeconds) : (low.farSideSeconds, high.farSideSeconds)
        return a + (b - a) * t
    }
}
