export interface LinearFit {
  slope: number
  intercept: number
  /** Coefficient of determination: 1 for points on a line, near 0 for noise. */
  r2: number
  n: number
}

/** Ordinary least squares over (x, y) points; null with fewer than two points or no spread in x. */
export function fitLine(points: readonly { x: number; y: number }[]): LinearFit | null {
  const n = points.length
  if (n < 2) return null
  let sumX = 0
  let sumY = 0
  for (const p of points) {
    sumX += p.x
    sumY += p.y
  }
  const meanX = sumX / n
  const meanY = sumY / n
  let sxx = 0
  let sxy = 0
  let syy = 0
  for (const p of points) {
    const dx = p.x - meanX
    const dy = p.y - meanY
    sxx += dx * dx
    sxy += dx * dy
    syy += dy * dy
  }
  if (sxx === 0) return null
  const slope = sxy / sxx
  const r2 = syy === 0 ? 1 : (sxy * sxy) / (sxx * syy)
  return { slope, intercept: meanY - slope * meanX, r2, n }
}
