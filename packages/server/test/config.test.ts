import { ConfigProvider, Effect, Exit, Option } from "effect"
import * as IpNetwork from "effect/net/IpNetwork"
import { describe, expect, it } from "vitest"
import { LOG_LEVEL_HELP, ServerConfig } from "../src/Config.ts"
import * as Deployment from "../src/Deployment.ts"
import * as TrustedProxies from "../src/TrustedProxies.ts"

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

describe("WHATSAPP_WEBHOOK_RATE_LIMIT and LEADLINE_TRUSTED_PROXIES", () => {
  const parsed = (env: Record<string, string>) =>
    Effect.runSyncExit(
      Effect.map(ServerConfig.parse(ConfigProvider.fromEnvRecord(env)), (config) => ({
        limit: config.whatsappWebhookRateLimit,
        proxies: TrustedProxies.networks(config.trustedProxies).map(IpNetwork.format)
      }))
    )

  it("allow 60 refused webhook requests an address a minute and trust no proxy unless set; 0 turns the limit off", () => {
    expect(parsed({})).toEqual(Exit.succeed({ limit: 60, proxies: [] }))
    expect(parsed({ WHATSAPP_WEBHOOK_RATE_LIMIT: "0" })).toEqual(Exit.succeed({ limit: 0, proxies: [] }))
    expect(
      parsed({ WHATSAPP_WEBHOOK_RATE_LIMIT: "500", LEADLINE_TRUSTED_PROXIES: " 10.0.0.0/8, 127.0.0.1 ,fd00::/8,::1" })
    ).toEqual(Exit.succeed({ limit: 500, proxies: ["10.0.0.0/8", "127.0.0.1/32", "fd00::/8", "::1/128"] }))
  })

  it("refuse a malformed value at start, naming it", () => {
    expect(Exit.isFailure(parsed({ WHATSAPP_WEBHOOK_RATE_LIMIT: "-1" }))).toBe(true)
    expect(Exit.isFailure(parsed({ WHATSAPP_WEBHOOK_RATE_LIMIT: "many" }))).toBe(true)
    for (const [value, message] of [
      ["10.0.0.0/8,proxy.internal", "LEADLINE_TRUSTED_PROXIES: proxy.internal: not an IP address or network"],
      ["10.0.0.1/8", "LEADLINE_TRUSTED_PROXIES: 10.0.0.1/8: address has non-zero host bits"]
    ]) {
      const exit = parsed({ LEADLINE_TRUSTED_PROXIES: value! })
      expect(Exit.isFailure(exit), value).toBe(true)
      expect(String(exit)).toContain(message)
    }
  })
})
