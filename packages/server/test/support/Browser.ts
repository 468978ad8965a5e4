import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"

/** Debian's chromium (CI installs it), or `CHROMIUM_PATH`. */
export const chromiumPath = (): string | undefined => {
  const configured = process.env.CHROMIUM_PATH
  if (configured !== undefined && configured !== "") return existsSync(configured) ? configured : undefined
  try {
    return execFileSync("which", ["chromium"], { encoding: "utf8" }).trim() || undefined
  } catch {
    return undefined
  }
}

export const MISSING =
  "No Chromium for the dashboard's browser tests: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH"

export const launch = (executablePath: string): Promise<Browser> => chromium.launch({ executablePath })

/** Screenshots go to test-artifacts/dashboard/ at the repository root (git-ignored). */
export const ARTIFACTS = join(import.meta.dirname, "..", "..", "..", "..", "test-artifacts", "dashboard")

export const WIDTHS = [1280, 390] as const

/** Every console error and uncaught exception of the page, to assert there are none. */
export const watchErrors = (page: Page) => {
  const errors: Array<string> = []
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()} (${page.url()})`)
  })
  page.on("pageerror", (error) => errors.push(`page error: ${error.message} (${page.url()})`))
  return {
    /** Takes what was collected since the last call. */
    take: () => errors.splice(0, errors.length)
  }
}

/** The page at both widths, as `<name>-<width>.png`; back at the first width after. */
export const screenshots = async (page: Page, name: string) => {
  mkdirSync(ARTIFACTS, { recursive: true })
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 })
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`), fullPage: true })
  }
  await page.setViewportSize({ width: WIDTHS[0], height: 800 })
}

/** A full-page screenshot of where a test failed; returns its path. */
export const failure = async (page: Page, test: string) => {
  mkdirSync(ARTIFACTS, { recursive: true })
  const path = join(ARTIFACTS, `FAILED-${test.replace(/[^a-z0-9]+/gi, "-").slice(0, 80)}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}

/** Every form control of the page without a label (a `<label>` or an `aria-label`), by its HTML. */
export const unlabelledControls = (page: Page): Promise<ReadonlyArray<string>> =>
  page.evaluate(`[...document.querySelectorAll("input, select, textarea")]
    .filter((control) => control.labels.length === 0 && !control.getAttribute("aria-label"))
    .map((control) => control.outerHTML.slice(0, 120))`)

/**
 * What makes the page scroll sideways at its current width: the elements reaching past its right
 * edge outside any box that scrolls or clips them, by the start of their HTML. A long word or name
 * must wrap, or scroll in its own box.
 */
export const overflowing = (page: Page): Promise<ReadonlyArray<string>> =>
  page.evaluate(`document.documentElement.scrollWidth <= innerWidth ? [] :
    [...document.querySelectorAll("body *")]
      .filter((element) => {
        if (element.getBoundingClientRect().right <= innerWidth + 1) return false
        for (let box = element.parentElement; box !== null && box !== document.body; box = box.parentElement)
          if (getComputedStyle(box).overflowX !== "visible") return false
        return true
      })
      .map((element) => element.outerHTML.slice(0, 120))`)
