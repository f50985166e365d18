import { describe, expect, it } from 'vitest'
import { classifyExit, type ExitEvidence } from '../../src/detect/classify-exit.js'
import { CrashLoopGuard } from '../../src/detect/crash-loop.js'

const none: ExitEvidence = {
  interrupted: false,
  hangKilled: false,
  deviceLost: false,
  gpuOom: false,
  deviceError: false,
}

describe('classifyExit', () => {
  it('puts what the monitor did first, then success, then what the output said, then SIGKILL', () => {
    expect(classifyExit({ code: 130, signal: null }, { ...none, interrupted: true, gpuOom: true })).toBe(
      'interrupted',
    )
    expect(classifyExit({ code: null, signal: 'SIGTERM' }, { ...none, hangKilled: true })).toBe('hang')
    expect(classifyExit({ code: null, signal: 'SIGKILL' }, { ...none, deviceLost: true })).toBe('device-lost')
    expect(classifyExit({ code: 0, signal: null }, { ...none, gpuOom: true })).toBe('success')
    expect(classifyExit({ code: 1, signal: null }, { ...none, gpuOom: true })).toBe('gpu-oom')
    expect(classifyExit({ code: 1, signal: null }, { ...none, deviceError: true })).toBe('device-error')
    expect(classifyExit({ code: null, signal: 'SIGKILL' }, none)).toBe('host-oom-kill')
    expect(classifyExit({ code: 137, signal: null }, none)).toBe('host-oom-kill')
    expect(classifyExit({ code: 1, signal: null }, none)).toBe('crash')
    expect(classifyExit({ code: null, signal: 'SIGSEGV' }, none)).toBe('crash')
  })
})

describe('CrashLoopGuard', () => {
  it('counts failures inside the window only, and starts over on reset', () => {
    const guard = new CrashLoopGuard({ failures: 3, windowMs: 1000 })
    expect(guard.record(0)).toBe(false)
    expect(guard.record(500)).toBe(false)
    expect(guard.record(1600)).toBe(false)
    expect(guard.record(1700)).toBe(false)
    expect(guard.record(1800)).toBe(true)
    guard.reset()
    expect(guard.record(1900)).toBe(false)
    expect(guard.count).toBe(1)
  })
})
