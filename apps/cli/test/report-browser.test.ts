/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The pages are read as documents, here and in the browser.
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  COMPARED,
  ESTIMATE_FLAGS,
  monitoredRun,
  PLAN_FLAGS,
  readPage,
  tableRows,
  tempDir,
} from './helpers/report-pages.js'
import { rigfitJson } from './helpers/run-cli.js'

// The three kinds of page, written by the real commands, opened in Debian's headless Chromium (installed by
// scripts/install-e2e-deps.sh; nothing is downloaded). RIGFIT_E2E=optional skips them where it cannot be installed.
const CHROMIUM = '/usr/bin/chromium'
const missing = !existsSync(CHROMIUM)
const repo = fileURLToPath(new URL('../../../', import.meta.url))
const artifacts = join(repo, '.turbo', 'report-screenshots')
const WIDTH = 1280

const pages: Record<'plans' | 'estimate' | 'run', string> = { plans: '', estimate: '', run: '' }
let browser: Browser | undefined

describe.skipIf(missing && process.env.RIGFIT_E2E === 'optional')(
  'the HTML reports in headless Chromium',
  () => {
    beforeAll(async () => {
      if (missing) throw new Error(`${CHROMIUM} is missing: run scripts/install-e2e-deps.sh as root`)
      const dir = tempDir()
      pages.plans = join(dir, 'plans.html')
      rigfitJson([
        'report',
        ...PLAN_FLAGS,
        ...COMPARED.flatMap((gpu) => ['--compare', gpu]),
        '--out',
        pages.plans,
      ])
      pages.estimate = join(dir, 'estimate.html')
      rigfitJson(['estimate', ...ESTIMATE_FLAGS, '--report', pages.estimate])
      const run = await monitoredRun(dir)
      if (run.result.status !== 0) throw new Error(`monitor failed: ${run.result.stderr}`)
      pages.run = run.report
      // launch() starts Chromium with a fresh profile folder of its own, removed when it closes.
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        // Without the background-networking switches Chromium reaches out on start; the page itself must not.
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      })
      mkdirSync(artifacts, { recursive: true })
    }, 300_000)
    afterAll(async () => {
      await browser?.close()
    })

    /** Opens a page and records what the browser complained about and fetched. */
    async function open(path: string, colorScheme: 'light' | 'dark' = 'light', javaScriptEnabled = true) {
      const context = await (browser as Browser).newContext({
        viewport: { width: WIDTH, height: 900 },
        colorScheme,
        javaScriptEnabled,
      })
      const page = await context.newPage()
      const errors: string[] = []
      const requests: string[] = []
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text())
      })
      page.on('pageerror', (error) => errors.push(error.message))
      page.on('request', (request) => requests.push(request.url()))
      await page.goto(`file://${path}`, { waitUntil: 'load' })
      return { page, errors, requests }
    }

    /** Marks drawn by the named Vega mark in a figure. */
    async function marks(page: Page, figure: string, name: string): Promise<number> {
      return page.locator(`#${figure} g.${name}_marks > path`).count()
    }

    for (const kind of ['plans', 'estimate', 'run'] as const) {
      it(`${kind}: loads with no errors and no requests, every plot drawn, fits ${WIDTH} px, not blank`, async () => {
        const { page, errors, requests } = await open(pages[kind])
        expect(errors).toEqual([])
        expect(requests).toEqual([`file://${pages[kind]}`])
        const figures = page.locator('figure.chart svg')
        expect(await figures.count()).toBeGreaterThan(0)
        for (const svg of await figures.all()) {
          const box = await svg.boundingBox()
          expect(box?.width).toBeGreaterThan(100)
          expect(box?.height).toBeGreaterThan(50)
          expect(box && box.x + box.width).toBeLessThanOrEqual(WIDTH)
        }
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(WIDTH)
        const shot = await page.screenshot({ fullPage: true, path: join(artifacts, `${kind}.png`) })
        expect(await distinctColours(shot)).toBeGreaterThan(20)
        if (process.env.RIGFIT_DOCS_SCREENSHOTS === '1') {
          await page.locator(`#${kind}`).screenshot({ path: join(repo, 'docs', `report-${kind}.png`) })
        }
        await page.close()
      })
    }

    it('plans: a stacked bar of 9 parts per mode, a bar per mode, a bar per compared GPU', async () => {
      const { page } = await open(pages.plans)
      expect(await marks(page, 'plans-memory', 'memory_parts')).toBe(3 * 9)
      expect(await marks(page, 'plans-tokens', 'plans_tokens_bars')).toBe(3)
      expect(await marks(page, 'what-if-time', 'what_if_time_bars')).toBe(COMPARED.length)
      await page.close()
    })

    it('estimate: a point per micro-batch and sequence in its table, and the capacity line', async () => {
      const { page } = await open(pages.estimate)
      const doc = readPage(pages.estimate)
      const microBatches = tableRows(doc, 'Memory vs micro-batch', 'estimate-micro-batch').length
      expect(
        await page.locator('#estimate-micro-batch g.estimate_micro_batch_points_marks > path').count(),
      ).toBe(microBatches)
      expect(
        await page.locator('#estimate-micro-batch g.estimate_micro_batch_capacity_marks > line').count(),
      ).toBe(1)
      await page.close()
    })

    it('run: a point per reading, a marker per event, in light and dark', async () => {
      const doc = readPage(pages.run)
      const events = tableRows(doc, 'Events of the run', 'run-events').length
      expect(events).toBeGreaterThan(0)
      const backgrounds: string[] = []
      for (const scheme of ['light', 'dark'] as const) {
        const { page } = await open(pages.run, scheme)
        expect(await marks(page, 'run-loss', 'run_loss_points')).toBe(
          tableRows(doc, 'Training loss', 'run-loss').length,
        )
        expect(await marks(page, 'run-memory', 'run_memory_points')).toBe(
          tableRows(doc, 'GPU memory against the plan', 'run-memory').length,
        )
        expect(await marks(page, 'run-events', 'run_events_marks')).toBe(events)
        expect(await page.locator('#run-loss g.run_loss_events_marks > line').count()).toBe(events)
        backgrounds.push(await page.evaluate(() => getComputedStyle(document.body).backgroundColor))
        await page.close()
      }
      expect(backgrounds[0]).not.toBe(backgrounds[1])
    })

    it('every page reads with JavaScript off: the same plots, drawn at the same size', async () => {
      for (const path of Object.values(pages)) {
        const on = await open(path)
        const off = await open(path, 'light', false)
        const boxes = async (page: Page) =>
          Promise.all((await page.locator('figure.chart svg').all()).map((svg) => svg.boundingBox()))
        const withScript = await boxes(on.page)
        expect(withScript.length).toBeGreaterThan(0)
        expect(await boxes(off.page)).toEqual(withScript)
        await on.page.close()
        await off.page.close()
      }
    })
  },
)

/** How many colours a screenshot has (sampled on a grid), counted by the browser in a blank page of its own. */
async function distinctColours(png: Buffer): Promise<number> {
  const page = await (browser as Browser).newPage()
  await page.setContent(`<img id="shot" src="data:image/png;base64,${png.toString('base64')}">`)
  const count = await page.evaluate(async () => {
    const img = document.getElementById('shot') as HTMLImageElement
    await img.decode()
    const canvas = document.createElement('canvas')
    canvas.width = img.naturalWidth
    canvas.height = img.naturalHeight
    const context = canvas.getContext('2d') as CanvasRenderingContext2D
    context.drawImage(img, 0, 0)
    const { data } = context.getImageData(0, 0, canvas.width, canvas.height)
    const colours = new Set<number>()
    for (let i = 0; i < data.length; i += 4 * 7)
      colours.add(((data[i] ?? 0) << 16) | ((data[i + 1] ?? 0) << 8) | (data[i + 2] ?? 0))
    return colours.size
  })
  await page.close()
  return count
}
