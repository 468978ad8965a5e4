import { ConfigProvider, Effect, Exit } from "effect"
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
