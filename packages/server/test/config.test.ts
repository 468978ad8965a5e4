import { ConfigProvider, Effect, Exit, Option } from "effect"
import { describe, expect, it } from "vitest"
import { LOG_LEVEL_HELP, ServerConfig } from "../src/Config.ts"

const logLevel = (value: string | undefined) =>
  Effect.runSyncExit(
    Effect.map(
      ServerConfig.parse(ConfigProvider.fromEnvRecord(value === undefined ? {} : { LOG_LEVEL: value })),
      (config) => config.logLevel
    )
  )

describe("LOG_LEVEL", () => {
  it("takes the usual spellings in any case", () => {
    const cases: Array<[string | undefined, string]> = [
      [undefined, "info"],
      ["debug", "debug"],
      ["warning", "warn"],
      ["WARNING", "warn"],
      ["Warn", "warn"],
      [" ERROR ", "error"],
      ["off", "none"]
    ]
    for (const [input, level] of cases) expect([input, logLevel(input)]).toEqual([input, Exit.succeed(level)])
  })

  it("refuses anything else with the accepted values in the message", () => {
    const exit = logLevel("verbose")
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(exit)).toContain(LOG_LEVEL_HELP)
    expect(LOG_LEVEL_HELP).toBe(
      "LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, none (any case; also warning, err, critical, off, silent, all)"
    )
  })
})

describe("LEADLINE_PUBLIC_URL", () => {
  const publicUrl = (value: string) =>
    Effect.runSyncExit(
      Effect.map(ServerConfig.parse(ConfigProvider.fromEnvRecord({ LEADLINE_PUBLIC_URL: value })), (config) =>
        Option.getOrUndefined(config.publicUrl)
      )
    )

  it("takes an absolute http(s) URL, a path included", () => {
    expect(publicUrl("https://api.leadline.test/crm")).toEqual(Exit.succeed("https://api.leadline.test/crm"))
  })

  it("refuses anything else at start, saying what it needs", () => {
    for (const wrong of ["api.leadline.test", "ftp://api.leadline.test", "https://api.leadline.test/?x=1"]) {
      const exit = publicUrl(wrong)
      expect(Exit.isFailure(exit), wrong).toBe(true)
      expect(String(exit)).toContain("LEADLINE_PUBLIC_URL: The public URL must be an absolute http(s) URL")
    }
  })
})
