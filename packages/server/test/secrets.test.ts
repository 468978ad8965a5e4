import { randomBytes } from "node:crypto"
import { ConfigProvider, Effect, Exit } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { ServerConfig } from "../src/Config.ts"
import * as Secrets from "../src/Secrets.ts"
import * as ServerProcess from "./support/ServerProcess.ts"
import * as Setups from "./support/Setups.ts"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const keyringOf = (env: Record<string, string>) =>
  Effect.runSyncExit(
    Effect.flatMap(ServerConfig.parse(ConfigProvider.fromEnvRecord(env)), (config) => Secrets.keyring(config))
  )

describe("LEADLINE_ENCRYPTION_KEY", () => {
  it("unset or empty keeps secrets unsealed; a keyring's first key seals", () => {
    expect(keyringOf({})).toEqual(Exit.succeed(undefined))
    expect(keyringOf({ LEADLINE_ENCRYPTION_KEY: " " })).toEqual(Exit.succeed(undefined))
    const exit = keyringOf({
      LEADLINE_ENCRYPTION_KEY: `k2:${randomBytes(32).toString("base64")},k1:${randomBytes(32).toString("base64")}`
    })
    expect(Exit.isSuccess(exit) && exit.value?.ids).toEqual(["k2", "k1"])
  })

  it("malformed, fails with a message naming the setting and never the key", () => {
    const short = randomBytes(31).toString("base64")
    const exit = keyringOf({ LEADLINE_ENCRYPTION_KEY: `k1:${short}` })
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(exit)).toContain(
      'LEADLINE_ENCRYPTION_KEY: key "k1" (entry 1) must be 32 bytes in base64 (44 characters; got 31 bytes)'
    )
    expect(String(exit)).not.toContain(short)
  })
})

describe("leadline secrets new-key", () => {
  it("prints an id and 32 random bytes in base64, a keyring entry", { timeout: 60_000 }, async () => {
    const named = await ServerProcess.runCli(["secrets", "new-key", "--id", "k9"], {})
    expect({ status: named.status, stderr: named.stderr }).toEqual({ status: 0, stderr: "" })
    const [id, key] = named.stdout.trim().split(":")
    expect(id).toBe("k9")
    expect(Buffer.from(key!, "base64")).toHaveLength(32)
    const dated = await ServerProcess.runCli(["secrets", "new-key"], {})
    expect(dated.stdout).toMatch(/^k\d{8}:[A-Za-z0-9+/]{43}=\n$/)
    expect(dated.stdout).not.toContain(key!)
  })
})

describe.each(Setups.databases(cleanups))("sealing at start and by leadline secrets reseal, on %s", (_name, setup) => {
  it("starts unsealed, reseals, then refuses to start without the key, and starts with it", {
    timeout: 180_000
  }, async () => {
    const { dataDir, env, query } = await setup()
    const k1 = `k1:${randomBytes(32).toString("base64")}`
    const accessToken = `EAAG-cli-${crypto.randomUUID()}`

    // No key: the server starts, says how to make one, and keeps the token unsealed.
    const plain = await ServerProcess.start({ dataDir, env })
    cleanups.push(() => plain.stop("SIGKILL"))
    expect(plain.log()).toContain(
      "Secrets: channel access tokens are stored unsealed; set LEADLINE_ENCRYPTION_KEY to seal them (make a key with `leadline secrets new-key`)"
    )
    const account = await fetch(`${plain.baseUrl}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${plain.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Sealed Ltd" })
    }).then((response) => response.json() as Promise<{ api_key: string }>)
    const created = await fetch(`${plain.baseUrl}/api/v1/channels`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" },
      body: JSON.stringify({
        type: "whatsapp",
        name: "Support",
        phone_number_id: `${Date.now()}`,
        display_phone_number: "+1 650-555-1111",
        access_token: accessToken
      })
    })
    expect(created.status).toBe(201)
    expect(plain.log()).not.toContain(accessToken)
    expect(await plain.stop()).toBe(0)
    const stored = () =>
      query<{ access_token: string; access_token_key: string | null }>(
        "SELECT access_token, access_token_key FROM channels"
      )
    expect(await stored()).toEqual([{ access_token: accessToken, access_token_key: null }])

    // The reseal needs a keyring; with one, it seals the clear token and says so.
    const refused = await ServerProcess.runCli(["secrets", "reseal"], { LEADLINE_DATA_DIR: dataDir, ...env })
    expect(refused.status).not.toBe(0)
    expect(refused.stderr).toContain("Reseal failed: LEADLINE_ENCRYPTION_KEY is not set")
    const resealed = await ServerProcess.runCli(["secrets", "reseal"], {
      LEADLINE_DATA_DIR: dataDir,
      LEADLINE_ENCRYPTION_KEY: k1,
      ...env
    })
    expect(resealed).toEqual({
      status: 0,
      stdout:
        "channels.access_token: 1 sealed, 0 moved to the current key, 0 changed meanwhile (left as written), 0 did not open\n",
      stderr: ""
    })
    const [row] = await stored()
    expect(row!.access_token_key).toBe("k1")
    expect(row!.access_token).toMatch(/^v1\.k1\./)
    expect(row!.access_token).not.toContain(accessToken)

    // Sealed rows and no key: start-up fails, naming the setting and the key the rows need.
    const failed = await ServerProcess.start({ dataDir, env }).then(
      () => "started",
      (error: Error) => error.message
    )
    expect(failed).toContain(
      "The database holds secrets sealed under the key(s) k1 (1 row), and LEADLINE_ENCRYPTION_KEY is not set"
    )

    // A malformed keyring: a clear error before anything opens.
    const malformed = await ServerProcess.start({
      dataDir,
      env: { ...env, LEADLINE_ENCRYPTION_KEY: "k1:tooshort" }
    }).then(
      () => "started",
      (error: Error) => error.message
    )
    expect(malformed).toContain('LEADLINE_ENCRYPTION_KEY: key "k1" (entry 1) must be 32 bytes in base64')

    const keyed = await ServerProcess.start({ dataDir, env: { ...env, LEADLINE_ENCRYPTION_KEY: k1 } })
    cleanups.push(() => keyed.stop("SIGKILL"))
    expect(keyed.log()).toContain("Secrets: sealed with the key k1 (keyring: k1)")
    expect(keyed.log()).not.toContain(k1.slice(3))
    expect(await keyed.stop()).toBe(0)
  })
})
