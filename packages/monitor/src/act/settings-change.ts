import type { LaunchSettings } from '@rigfit/core'

/** New settings and, in words, what changed and why it keeps (or cannot keep) the effective batch. */
export interface SettingsChange {
  settings: LaunchSettings
  changes: string[]
}
