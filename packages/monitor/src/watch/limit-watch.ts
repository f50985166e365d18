import type { MonitorBatteryReading, MonitorGpuReading } from '@rigfit/core'
import { HysteresisGate } from '../act/hysteresis-gate.js'

export type LimitCause = 'temperature' | 'power' | 'battery'

/** A limit crossed ('close': pause) or cleared ('open': resume), in words and figures. */
export interface LimitEvent {
  cause: LimitCause
  transition: 'close' | 'open'
  reason: string
  details: Record<string, unknown>
}

export interface LimitOptions {
  maxTempC: number
  tempHysteresisC: number
  maxPowerW: number | null
  /** Null: 10% of maxPowerW. */
  powerHysteresisW: number | null
  minBatteryPercent: number
}

/** Power readings above the limit needed in a row: draw spikes for milliseconds under normal load. */
const POWER_SUSTAIN = 3

/**
 * The thermal, power and battery limits as state machines over samples: the hottest GPU in use against
 * --max-temp with hysteresis, the GPUs' total draw against --max-power, and the battery against --min-battery
 * (closed on battery below the threshold, open again on AC).
 */
export class LimitWatch {
  private readonly thermal: HysteresisGate
  private readonly power: HysteresisGate | null
  private onBattery = false
  private batteryClosed = false

  constructor(private readonly options: LimitOptions) {
    this.thermal = new HysteresisGate(options.maxTempC, options.maxTempC - options.tempHysteresisC)
    this.power =
      options.maxPowerW === null
        ? null
        : new HysteresisGate(
            options.maxPowerW,
            options.maxPowerW - (options.powerHysteresisW ?? options.maxPowerW * 0.1),
            POWER_SUSTAIN,
          )
  }

  /** The power hysteresis in effect (watts), null without a power limit. */
  get powerHysteresisW(): number | null {
    return this.power === null ? null : this.power.high - this.power.low
  }

  /**
   * Feeds one sample: `gpus` are fresh readings of the GPUs the run uses (empty when stale). Answers the
   * limit transitions and, when the machine just went on battery, that reading.
   */
  update(
    gpus: MonitorGpuReading[],
    battery: MonitorBatteryReading | null,
  ): { events: LimitEvent[]; wentOnBattery: MonitorBatteryReading | null } {
    const events: LimitEvent[] = []
    const o = this.options
    const temps = gpus.map((gpu) => gpu.temperatureC).filter((t): t is number => t !== null)
    const hottest = temps.length > 0 ? Math.max(...temps) : null
    const device = gpus.find((gpu) => gpu.temperatureC === hottest)
    const where = device ? `GPU${device.index}` : 'GPU'
    const thermal = this.thermal.update(hottest)
    if (thermal !== null) {
      const details = {
        device: where,
        temperatureC: hottest,
        maxTempC: o.maxTempC,
        resumeBelowC: this.thermal.low,
      }
      events.push({
        cause: 'temperature',
        transition: thermal,
        details,
        reason:
          thermal === 'close'
            ? `${where} at ${hottest}°C is above --max-temp ${o.maxTempC}°C`
            : `${where} cooled to ${hottest}°C, below ${this.thermal.low}°C (--max-temp ${o.maxTempC} − --temp-hysteresis ${o.tempHysteresisC})`,
      })
    }
    if (this.power !== null) {
      const draws = gpus.map((gpu) => gpu.powerWatts).filter((w): w is number => w !== null)
      const total = draws.length > 0 ? draws.reduce((sum, w) => sum + w, 0) : null
      const power = this.power.update(total)
      if (power !== null) {
        const watts = Math.round(total ?? 0)
        events.push({
          cause: 'power',
          transition: power,
          details: { powerWatts: total, maxPowerW: this.power.high, resumeBelowW: this.power.low },
          reason:
            power === 'close'
              ? `GPU power ${watts} W is above --max-power ${this.power.high} W`
              : `GPU power fell to ${watts} W, below ${this.power.low} W`,
        })
      }
    }
    const wentOnBattery = battery?.onBattery && !this.onBattery ? battery : null
    if (battery !== null) {
      this.onBattery = battery.onBattery
      const low = battery.onBattery && battery.percent !== null && battery.percent < o.minBatteryPercent
      if (low && !this.batteryClosed) {
        this.batteryClosed = true
        events.push({
          cause: 'battery',
          transition: 'close',
          details: { ...battery, minBatteryPercent: o.minBatteryPercent },
          reason: `battery at ${battery.percent}% is below --min-battery ${o.minBatteryPercent}%`,
        })
      } else if (!battery.onBattery && this.batteryClosed) {
        this.batteryClosed = false
        events.push({
          cause: 'battery',
          transition: 'open',
          details: { ...battery },
          reason: `back on AC power (battery ${battery.percent ?? '?'}%)`,
        })
      }
    }
    return { events, wentOnBattery }
  }
}
