import { ConfigProvider, Effect, Exit, Option } from "effect"
import { describe, expect, it } from "vitest"
import { LOG_LEVEL_HELP, ServerConfig } from "../src/Config.ts"
import * as Deployment from "../src/Deployment.ts"

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

describe("LEADLINE_MEDIA_FETCHER_ENABLED", () => {
  const loops = (env: Record<string, string>) =>
    Effect.runSync(
      Effect.map(ServerConfig.parse(ConfigProvider.fromEnvRecord(env)), (config) => ({
        serve: Deployment.loopOptions(config, { webhooks: true, media: config.media.fetcherEnabled }).mediaFetcher,
        worker: Deployment.loopOptions(config, { webhooks: true, media: true }).mediaFetcher
      }))
    )

  it("runs the fetcher in the server unless set to false; a worker always runs one", () => {
    const on = loops({})
    expect(on.serve).toMatchObject({ limits: { image: 5 * 1024 * 1024 } })
    expect(on.worker).toEqual(on.serve)
    const off = loops({ LEADLINE_MEDIA_FETCHER_ENABLED: "false" })
    expect(off.serve).toBe(false)
    expect(off.worker).toEqual(on.worker)
  })
})
