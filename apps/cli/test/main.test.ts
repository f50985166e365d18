import { describe, expect, it } from 'vitest'
import { z } from 'zod'

describe("the CLI's entry module", () => {
  it("turns zod's generated parsers off: each input is parsed once, where generating one costs more than it saves", async () => {
    z.config({ jitless: false })
    await import('../src/main.js')
    expect(z.config().jitless).toBe(true)
  })
})
