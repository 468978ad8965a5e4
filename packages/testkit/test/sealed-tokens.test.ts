import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, type Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChannelsRepo } from "@leadline/core/channels/ChannelsRepo"
import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"
import type * as Database from "@leadline/sql-adapter/Database"
import * as Keyring from "@leadline/sql-adapter/sealing/Keyring"
import * as SealedSecrets from "@leadline/sql-adapter/sealing/SealedSecrets"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as CloudMedia from "@leadline/whatsapp-adapter/cloud/CloudMedia"
import * as CloudTransport from "@leadline/whatsapp-adapter/cloud/CloudTransport"
import { createChannel } from "../src/channels/ChannelsResource.ts"
import { TEMPLATE_SEND } from "../src/conversations/ConversationsResource.ts"
import { receiveFile } from "../src/conversations/InboundMedia.ts"
import { type AccountFixture, makeAccount } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import { until } from "../src/internal/wire.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"
import * as MockGraph from "../src/whatsapp/MockGraph.ts"

/**
 * Channel access tokens sealed at rest (docs/contract-messaging.md §3, "Sealed access tokens"):
 * the create, PATCH and send path on every wiring, the stored column read directly on SQL, and
 * the keyring's rotation and start-up checks on PGlite or TEST_DATABASE_URL's PostgreSQL.
 */

const TOKEN_COLUMN = SealedSecrets.COLUMNS[0]!
const token = (label: string) => `EAAG-${label}-${crypto.randomUUID()}`

interface Built {
  readonly context: Context.Context<any>
  readonly run: <A>(effect: Effect.Effect<A, unknown, any>) => Promise<A>
  readonly close: () => Promise<void>
}

const build = async (app: Layer.Layer<any, unknown>): Promise<Built> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(app, scope))
  return {
    context,
    run: <A>(effect: Effect.Effect<A, unknown, any>) =>
      Effect.runPromise(Effect.provide(effect, context) as Effect.Effect<A, unknown>),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** The channel's stored token and key id, read from the table. */
const storedToken = (built: Built, channelId: string) =>
  built
    .run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<{ account_id: string; access_token: string; access_token_key: string | null }>`
          SELECT account_id::text AS account_id, access_token, access_token_key FROM channels WHERE id = ${channelId}`
      )
    )
    .then((rows) => rows[0]!)

const wirings: ReadonlyArray<
  readonly [
    name: string,
    wire: () => Promise<{ app: Layer.Layer<any, unknown>; dispose: () => Promise<void> }>,
    sql: boolean
  ]
> = [
  ["in memory", async () => ({ app: MemoryApp.layer, dispose: async () => {} }), false],
  [
    "on SQL with LEADLINE_ENCRYPTION_KEY set",
    async () => {
      const database = await TestDatabase.make()
      const keyring = Keyring.parse(Keyring.newKey("k1"))
      return { app: SqlApp.layer({ ...database.config, keyring }), dispose: () => database.dispose() }
    },
    true
  ]
]

for (const [name, wire, sql] of wirings) {
  describe(`a channel's access token ${name}`, () => {
    let graph: MockGraph.MockGraph
    let built: Built
    let server: TestServer.Running
    let account: AccountFixture
    let lead: string
    let dispose: () => Promise<void>

    beforeAll(async () => {
      graph = await MockGraph.start()
      const made = await wire()
      dispose = made.dispose
      built = await build(made.app)
      server = await TestServer.start({
        app: Layer.succeedContext(built.context),
        messaging: {
          transport: CloudTransport.layer({ baseUrl: graph.url, timeoutMillis: 2000 }),
          mediaDownloader: CloudMedia.layer({ baseUrl: graph.url, version: "v24.0", timeoutMillis: 2_000 }),
          mediaFetcher: { pollMillis: 100, retryBaseMillis: 20, maxAttempts: 3 },
          // A short lease: a message held by a token that does not open is claimed again soon.
          senderOptions: { pollMillis: 100, leaseMillis: 1000 }
        }
      })
      account = await makeAccount(server)
      lead = (
        await call(server, "POST", "/api/v1/leads", {
          auth: account.ownerKey,
          json: { name: "Sealed Customer", phone: "+14155550177" }
        })
      ).body.id
    })
    afterAll(async () => {
      await server?.close()
      await built?.close()
      await graph?.close()
      await dispose?.()
    })

    /** Queues a template on the channel; its id. */
    const queue = async (channelId: string) => {
      const sent = await call(server, "POST", "/api/v1/messages", {
        auth: account.ownerKey,
        json: { ...TEMPLATE_SEND, lead_id: lead, channel_id: channelId }
      })
      expect(sent.status, sent.text).toBe(201)
      return sent.body.id as string
    }
    const statusOf = async (id: string) =>
      (await call(server, "GET", `/api/v1/messages/${id}`, { auth: account.ownerKey })).body.status as string

    /** Waits for the message to be sent; the Authorization header Graph received for it. */
    const settledWith = async (id: string) => {
      const final = await until(
        async () => (await call(server, "GET", `/api/v1/messages/${id}`, { auth: account.ownerKey })).body,
        (message) => message.status !== "queued",
        15_000
      )
      expect(final).toMatchObject({ status: "sent", error: null })
      const posts = graph
        .requests()
        .filter((r) => (r.body as { biz_opaque_callback_data?: string } | undefined)?.biz_opaque_callback_data === id)
      expect(posts).toHaveLength(1)
      return posts[0]!.headers.authorization
    }
    const sentWith = async (channelId: string) => settledWith(await queue(channelId))

    it("sends with the token given at create and then by PATCH, and never returns it", async () => {
      const first = token("first")
      const channel = await createChannel(server, account.ownerKey, { access_token: first })
      expect(JSON.stringify(channel)).not.toContain(first)
      expect(channel).not.toHaveProperty("access_token")
      expect(await sentWith(channel.id)).toBe(`Bearer ${first}`)

      const second = token("second")
      const patched = await call(server, "PATCH", `/api/v1/channels/${channel.id}`, {
        auth: account.ownerKey,
        json: { access_token: second }
      })
      expect(patched.status, patched.text).toBe(200)
      expect(patched.text).not.toContain(second)
      expect(await sentWith(channel.id)).toBe(`Bearer ${second}`)

      // A PATCH without a token keeps the sealed one.
      const renamed = await call(server, "PATCH", `/api/v1/channels/${channel.id}`, {
        auth: account.ownerKey,
        json: { name: "Renamed" }
      })
      expect(renamed.status, renamed.text).toBe(200)
      expect(await sentWith(channel.id)).toBe(`Bearer ${second}`)

      for (const path of [`/api/v1/channels/${channel.id}`, "/api/v1/channels"]) {
        const read = await call(server, "GET", path, { auth: account.ownerKey })
        expect(read.status).toBe(200)
        expect(read.text).not.toContain(first)
        expect(read.text).not.toContain(second)
      }

      if (sql) {
        const row = await storedToken(built, channel.id)
        expect(row.access_token_key).toBe("k1")
        expect(Keyring.keyIdOf(row.access_token)).toBe("k1")
        expect(row.access_token).not.toContain(second)
        expect(row.access_token).not.toContain("EAAG")
        const all = await built.run(
          Effect.flatMap(SqlClient.SqlClient, (client) => client`SELECT * FROM channels WHERE id = ${channel.id}`)
        )
        expect(JSON.stringify(all)).not.toContain(second)
      }
    })

    it("fetches an inbound file with the clear token", async () => {
      const clear = token("media")
      const channel = await createChannel(server, account.ownerKey, { access_token: clear })
      const bytes = new TextEncoder().encode("a customer's photo")
      graph.media("sealed-photo-1", bytes, { mimeType: "image/jpeg" })
      const { media } = await receiveFile(
        server,
        account.ownerKey,
        { type: "image", mediaId: "sealed-photo-1", mimeType: "image/jpeg" },
        { channel }
      )
      expect(media).toMatchObject({ state: "stored", size: bytes.length })
      const asked = graph.requests().filter((r) => r.method === "GET" && r.path.includes("sealed-photo-1"))
      expect(asked.length).toBeGreaterThan(0)
      for (const request of asked) expect(request.headers.authorization).toBe(`Bearer ${clear}`)
    })

    if (sql) {
      it("refuses a sealed token moved to another channel's row, saying so without the token, and holds its messages", async () => {
        const kept = token("kept")
        const a = await createChannel(server, account.ownerKey, { access_token: token("a") })
        const b = await createChannel(server, account.ownerKey, { access_token: kept })
        const bRow = await storedToken(built, b.id)
        await built.run(
          Effect.flatMap(
            SqlClient.SqlClient,
            (client) =>
              client`UPDATE channels SET access_token = ${bRow.access_token}, access_token_key = ${bRow.access_token_key}
                     WHERE id = ${a.id}`
          )
        )
        const exit = await Effect.runPromiseExit(
          Effect.provide(
            Effect.flatMap(ChannelsRepo, (repo) => repo.connection(a.phone_number_id)),
            built.context
          ) as Effect.Effect<unknown, unknown>
        )
        expect(Exit.isFailure(exit)).toBe(true)
        const said = Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
        expect(said).toContain(
          `The value in ${SealedSecrets.contextOf(TOKEN_COLUMN, account.accountId, a.id)} does not open under the key "k1": it was changed, or moved from another row`
        )
        expect(said).not.toContain(kept)
        expect(said).not.toContain(bRow.access_token)

        // The sender holds the channel's message and sends the others'; a new token releases it.
        const held = await queue(a.id)
        expect(await sentWith(b.id)).toBe(`Bearer ${kept}`)
        expect(await statusOf(held)).toBe("queued")
        const fresh = token("fresh")
        const patched = await call(server, "PATCH", `/api/v1/channels/${a.id}`, {
          auth: account.ownerKey,
          json: { access_token: fresh }
        })
        expect(patched.status, patched.text).toBe(200)
        expect(await settledWith(held)).toBe(`Bearer ${fresh}`)
      })
    }
  })
}

describe(`rotating LEADLINE_ENCRYPTION_KEY on ${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "PGlite"}`, () => {
  // One database that every start opens again: a directory for PGlite, a schema on PostgreSQL.
  let config: Database.Config
  let dispose: () => Promise<void>
  const k1 = Keyring.newKey("k1")
  const k2 = Keyring.newKey("k2")
  const ring = (setting: string | undefined) => (setting === undefined ? undefined : Keyring.parse(setting))
  const start = (setting: string | undefined) => build(SqlApp.layer({ ...config, keyring: ring(setting) }))

  /** Why a start with this keyring fails. */
  const refusal = async (setting: string | undefined) => {
    const exit = await Effect.runPromiseExit(
      Effect.scoped(Layer.build(SqlApp.layer({ ...config, keyring: ring(setting) })))
    )
    expect(Exit.isFailure(exit)).toBe(true)
    const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
    expect(error).toBeInstanceOf(SealedSecrets.MissingKeys)
    return (error as SealedSecrets.MissingKeys).message
  }

  /** The token the sender would use for the channel. */
  const tokenOf = async (built: Built, phoneNumberId: string) => {
    const found = await built.run(Effect.flatMap(ChannelsRepo, (repo) => repo.connection(phoneNumberId)))
    return found === undefined ? undefined : Redacted.value(found.accessToken)
  }

  beforeAll(async () => {
    if (process.env.TEST_DATABASE_URL) {
      const database = await TestDatabase.make()
      config = database.config
      dispose = database.dispose
    } else {
      const dir = mkdtempSync(join(tmpdir(), "leadline-sealed-"))
      config = { dataDir: dir }
      dispose = async () => rmSync(dir, { recursive: true, force: true })
    }
  })
  afterAll(async () => dispose?.())

  it("opens older keys' rows, reseals them under the first key, refuses to start without their key", async () => {
    const clearToken = token("clear")
    const sealedToken = token("sealed")
    const tampered = token("tampered")
    const channels: Record<"clear" | "sealed" | "tampered", { id: string; phone_number_id: string }> = {} as never

    // A server with no key keeps the token unsealed; then one with k1 seals the next.
    for (const [setting, label, value] of [
      [undefined, "clear", clearToken],
      [k1, "sealed", sealedToken]
    ] as const) {
      const built = await start(setting)
      const server = await TestServer.start({ app: Layer.succeedContext(built.context) })
      const account = await makeAccount(server)
      channels[label] = await createChannel(server, account.ownerKey, { access_token: value })
      if (label === "sealed") {
        channels.tampered = await createChannel(server, account.ownerKey, { access_token: tampered })
      }
      await server.close()
      await built.close()
    }
    const first = await start(k1)
    expect((await storedToken(first, channels.clear.id)).access_token).toBe(clearToken)
    expect((await storedToken(first, channels.sealed.id)).access_token_key).toBe("k1")
    expect(await tokenOf(first, channels.clear.phone_number_id)).toBe(clearToken)
    expect(await tokenOf(first, channels.sealed.phone_number_id)).toBe(sealedToken)
    await first.close()

    // No keyring, or one without k1: start-up refuses, naming the setting and the keys the rows need.
    expect(await refusal(undefined)).toBe(
      "The database holds secrets sealed under the key(s) k1 (2 rows), and LEADLINE_ENCRYPTION_KEY is not set: set it to the keyring that sealed them"
    )
    expect(await refusal(k2)).toBe(
      "The database holds secrets sealed under the key(s) k1 (2 rows), which LEADLINE_ENCRYPTION_KEY does not hold (it holds k2): add them to the keyring"
    )

    // k1's id with other bytes: the ids match, the rows do not open.
    const impostor = await refusal(Keyring.newKey("k1"))
    expect(impostor).toMatch(
      /^The key k1 in LEADLINE_ENCRYPTION_KEY opens none of the values sealed under k1 \(tried channels\.access_token\/[^)]+\): it is not the key that sealed them; give that key under its id$/
    )
    expect(impostor).not.toContain(sealedToken)

    // k2 first, k1 kept: both rows open; the reseal seals the clear one and moves the others to k2.
    const rotated = await start(`${k2},${k1}`)
    expect(await tokenOf(rotated, channels.clear.phone_number_id)).toBe(clearToken)
    expect(await tokenOf(rotated, channels.sealed.phone_number_id)).toBe(sealedToken)
    // One changed byte in the last row: the reseal leaves it, and says which.
    const stored = await storedToken(rotated, channels.tampered.id)
    const parts = stored.access_token.split(".")
    const bytes = Buffer.from(parts[3]!, "base64url")
    bytes[0] = bytes[0]! ^ 1
    parts[3] = bytes.toString("base64url")
    await rotated.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE channels SET access_token = ${parts.join(".")} WHERE id = ${channels.tampered.id}`
      )
    )
    const report = await rotated.run(SealedSecrets.reseal(Keyring.parse(`${k2},${k1}`), { batchSize: 1 }))
    const tamperedContext = SealedSecrets.contextOf(
      TOKEN_COLUMN,
      (await storedToken(rotated, channels.tampered.id)).account_id,
      channels.tampered.id
    )
    expect(report).toEqual([
      {
        table: "channels",
        column: "access_token",
        sealed: 1,
        rekeyed: 1,
        changedMeanwhile: 0,
        failed: [tamperedContext]
      }
    ])
    for (const channel of [channels.clear, channels.sealed]) {
      const row = await storedToken(rotated, channel.id)
      expect(row.access_token_key).toBe("k2")
      expect(Keyring.keyIdOf(row.access_token)).toBe("k2")
    }
    expect(await storedToken(rotated, channels.clear.id)).not.toMatchObject({ access_token: clearToken })
    // The tampered row goes, so that k1 is no longer needed.
    await rotated.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM channels WHERE id = ${channels.tampered.id}`)
    )
    await rotated.close()

    // k2 alone now opens every row; a second reseal has nothing to do.
    const after = await start(k2)
    expect(await tokenOf(after, channels.clear.phone_number_id)).toBe(clearToken)
    expect(await tokenOf(after, channels.sealed.phone_number_id)).toBe(sealedToken)
    expect(await after.run(SealedSecrets.reseal(Keyring.parse(k2)))).toEqual([
      { table: "channels", column: "access_token", sealed: 0, rekeyed: 0, changedMeanwhile: 0, failed: [] }
    ])
    await after.close()
  })
})
