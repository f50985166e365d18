/**
 * Risk that sustained training throttles: high when a GPU is at 83 °C or more or the CPU at 90 °C or more
 * right now (idle readings that high leave no headroom); medium from 75 °C (GPU) / 80 °C (CPU), or on battery,
 * where firmware caps power; low when temperatures are known and below; unknown without any reading.
 */
export function throttlingRisk(
  cpuTempC: number | null,
  gpuTempsC: (number | null)[],
  onBattery: boolean,
): 'low' | 'medium' | 'high' | 'unknown' {
  const gpuMax = Math.max(...gpuTempsC.filter((t): t is number => t !== null), Number.NEGATIVE_INFINITY)
  const cpu = cpuTempC ?? Number.NEGATIVE_INFINITY
  if (gpuMax >= 83 || cpu >= 90) return 'high'
  if (gpuMax >= 75 || cpu >= 80 || onBattery) return 'medium'
  if (cpuTempC !== null || gpuMax > Number.NEGATIVE_INFINITY) return 'low'
  return 'unknown'
}
