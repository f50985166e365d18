import { join } from 'node:path'
import { listDir, readValue } from '../system/read.js'

export interface TemperatureSensor {
  name: string
  tempC: number
}

const CPU_HWMON = /^(coretemp|k10temp|zenpower|cpu_thermal|cpu-thermal|soc_thermal|apple_smc|acpitz)$/
const CPU_ZONE = /^(x86_pkg_temp|cpu[-_]thermal|soc[-_]thermal|cpu\d*|package)/i

function milliToC(raw: string | null): number | null {
  const value = Number(raw)
  if (!raw || !Number.isFinite(value)) return null
  const celsius = value / 1000
  return celsius > -40 && celsius < 150 ? Math.round(celsius * 10) / 10 : null
}

/** Every temperature sensor in /sys/class/hwmon and /sys/class/thermal, and the CPU's (the hottest CPU sensor). */
export async function readTemperatures(
  sysRoot = '/sys',
): Promise<{ cpuTempC: number | null; sensors: TemperatureSensor[] }> {
  const sensors: TemperatureSensor[] = []
  const cpuTemps: number[] = []
  for (const hwmon of await listDir(join(sysRoot, 'class/hwmon'))) {
    const dir = join(sysRoot, 'class/hwmon', hwmon)
    const name = (await readValue(join(dir, 'name'))) ?? hwmon
    for (const file of await listDir(dir)) {
      const match = /^temp(\d+)_input$/.exec(file)
      if (!match) continue
      const tempC = milliToC(await readValue(join(dir, file)))
      if (tempC === null) continue
      const label = await readValue(join(dir, `temp${match[1]}_label`))
      sensors.push({ name: label ? `${name} ${label}` : name, tempC })
      if (CPU_HWMON.test(name)) cpuTemps.push(tempC)
    }
  }
  for (const zone of await listDir(join(sysRoot, 'class/thermal'))) {
    if (!zone.startsWith('thermal_zone')) continue
    const dir = join(sysRoot, 'class/thermal', zone)
    const type = (await readValue(join(dir, 'type'))) ?? zone
    const tempC = milliToC(await readValue(join(dir, 'temp')))
    if (tempC === null) continue
    sensors.push({ name: `zone ${type}`, tempC })
    if (CPU_ZONE.test(type) && cpuTemps.length === 0) cpuTemps.push(tempC)
  }
  return { cpuTempC: cpuTemps.length > 0 ? Math.max(...cpuTemps) : null, sensors }
}
