import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import * as MockGraph from "@leadline/testkit/whatsapp/MockGraph"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import * as MetaSignature from "@leadline/whatsapp-adapter/meta/MetaSignature"
import { post } from "./Http.ts"
import * as Load from "./Load.ts"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"

/**
 * The inbound files' part of `npm run bench:messaging` (issue 32's acceptance), on PostgreSQL, with
 * the Cloud API transport against a loopback MockGraph serving the files:
 * - the acknowledgement of one message per signed POST, text only and with every third message an
 *   image of 100 KB, alternating in the same server (BENCH_ROUNDS rounds of BENCH_SECONDS each), as fast
 *   as answered and at a steady BENCH_MEDIA_ACK_RATE (300) POSTs/s, the fetch queue drained between runs;
 * - one server's fetcher draining BENCH_MEDIA_FILES (2,000) images of 100 KB: files kept per second;
 * - BENCH_MEDIA_LARGE (1,000) images of 5 MB kept, the server's resident set sampled every second.
 * Files go to a directory (`LEADLINE_MEDIA_STORE=fs`), removed after the run. Writes bench/MEDIA.md.
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const CONNECTIONS = Number(process.env.BENCH_MESSAGING_CONNECTIONS ?? 10)
const FILES = Number(process.env.BENCH_MEDIA_FILES ?? 2_000)
/** The steady arrival rate at which the acks' tails are compared (a busy number, under saturation). */
const ACK_RATE = Number(process.env.BENCH_MEDIA_ACK_RATE ?? 300)
const LARGE = Number(process.env.BENCH_MEDIA_LARGE ?? 1_000)
const SECRET = "bench-app-secret"
const NUMBER = "100200301"
const SMALL_BYTES = 100 * 1000
const LARGE_BYTES = 5 * 1000 * 1000
const here = join(import.meta.dirname, "..")
const log = (line: string) => console.log(`[bench:media ${new Date().toISOString().slice(11, 19)}] ${line}`)

const decoder = new TextDecoder()
let sequence = 0

/** One signed webhook body holding `count` messages; `image(n)` names the media id of message n, or none (text). */
const webhook = (count: number, image: (n: number) => string | undefined) => {
  const timestamp = new Date()
  const messages = Array.from({ length: count }, () => {
    const n = sequence++
    const from = `1415${String(3_000_000 + (n % 2_000)).padStart(7, "0")}`
    const externalId = `wamid.MEDIABENCH${n}`
    const mediaId = image(n)
    return mediaId === undefined
      ? {
          from,
          id: externalId,
          timestamp: String(Math.floor(timestamp.getTime() / 1000)),
          type: "text",
          text: { body: `Message ${n}` }
        }
      : MetaPayloads.mediaMessage({
          from,
          externalId,
          timestamp,
          type: "image",
          mediaId,
          mimeType: "image/jpeg",
          sha256: shaOf(mediaId)
        })
  })
  const raw = MetaPayloads.messagesChangePayload(NUMBER, "16505551112", {
    contacts: messages.map((m) => ({ profile: { name: "Customer" }, wa_id: m.from })),
    messages
  })
  return { body: decoder.decode(raw), headers: { "x-hub-signature-256": MetaSignature.sign(SECRET, raw) } }
}

const small = new Uint8Array(SMALL_BYTES).map((_, i) => (i * 31) % 251)
const large = new Uint8Array(LARGE_BYTES).map((_, i) => (i * 17) % 253)
const SMALL_SHA = createHash("sha256").update(small).digest("hex")
const LARGE_SHA = createHash("sha256").update(large).digest("hex")
const shaOf = (mediaId: string) => (mediaId.startsWith("large-") ? LARGE_SHA : SMALL_SHA)

const main = async () => {
  Processes.pinSelf()
  const graph = await MockGraph.start()
  const db = await Postgres.freshDatabase("media")
  const mediaDir = mkdtempSync(join(tmpdir(), "leadline-bench-media-"))
  const running: Array<Processes.Running> = []
  try {
    // The files Graph serves: every id shares one buffer, so the mock holds each size once.
    for (let i = 0; i < 1_000; i++) graph.media(`small-${i}`, small, { mimeType: "image/jpeg", sha256: SMALL_SHA })
    for (let i = 0; i < LARGE; i++) graph.media(`large-${i}`, large, { mimeType: "image/jpeg", sha256: LARGE_SHA })
    const server = await Processes.leadline(db.url, {
      WHATSAPP_APP_SECRET: SECRET,
      WHATSAPP_VERIFY_TOKEN: "bench",
      WHATSAPP_SENDER_ENABLED: "false",
      WHATSAPP_TRANSPORT: "cloud",
      WHATSAPP_API_BASE_URL: graph.url,
      WHATSAPP_TEMPLATES_SYNC_SECONDS: "0",
      LEADLINE_MEDIA_STORE: "fs",
      LEADLINE_MEDIA_DIR: mediaDir
    })
    running.push(server)
    const account = await post(server.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, {
      name: "Media",
      plan_id: "scale"
    })
    await post(server.url, "/api/v1/channels", account.api_key as string, {
      type: "whatsapp",
      name: "Bench",
      phone_number_id: NUMBER,
      display_phone_number: "+16505551112",
      access_token: "bench"
    })

    const counts = async () => {
      const [row] = await Postgres.query<Record<string, string>>(
        db.url,
        `SELECT count(*) FILTER (WHERE media->>'state' = 'stored') AS stored,
                count(*) FILTER (WHERE media->>'state' = 'failed') AS failed,
                count(*) FILTER (WHERE media->>'state' = 'pending') AS pending
         FROM messages WHERE direction = 'inbound' AND media IS NOT NULL`
      )
      return { stored: Number(row!.stored), failed: Number(row!.failed), pending: Number(row!.pending) }
    }
    const drained = async (limitMillis = 600_000) => {
      const started = Date.now()
      while ((await counts()).pending > 0 && Date.now() - started < limitMillis) {
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }

    // 1. The acknowledgement, text only and with every third message an image, in turns.
    const ackLoad = (withMedia: boolean, seconds: number, rate?: number) =>
      Load.run({
        url: server.url,
        path: "/webhooks/whatsapp",
        method: "POST",
        headers: { "content-type": "application/json" },
        next: () => webhook(1, (n) => (withMedia && n % 3 === 0 ? `small-${n % 1_000}` : undefined)),
        connections: CONNECTIONS,
        seconds,
        rate
      })
    await ackLoad(true, 3)
    await drained()
    // Each kind twice: as fast as the server answers (its throughput), and at a steady ACK_RATE, where a
    // tail that the fetches lengthen shows (at saturation any added work lengthens it).
    type Kind = "text" | "media"
    type Shape = "saturated" | "steady"
    const acks: Record<Shape, Record<Kind, Array<Load.LoadResult>>> = {
      saturated: { text: [], media: [] },
      steady: { text: [], media: [] }
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of round % 2 === 0 ? (["text", "media"] as const) : (["media", "text"] as const)) {
        for (const shape of ["saturated", "steady"] as const) {
          const result = await ackLoad(kind === "media", SECONDS, shape === "steady" ? ACK_RATE : undefined)
          acks[shape][kind].push(result)
          log(
            `ack, ${kind}, ${shape}: ${result.requestsPerSecond.toFixed(0)} POSTs/s, p50 ${result.p50} ms, p99 ${result.p99} ms`
          )
          await drained()
        }
      }
    }
    const median = (values: ReadonlyArray<number>) => {
      const sorted = [...values].sort((a, b) => a - b)
      const middle = Math.floor(sorted.length / 2)
      return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
    }
    const ack = (shape: Shape, kind: Kind) => ({
      rate: median(acks[shape][kind].map((r) => r.requestsPerSecond)),
      p50: median(acks[shape][kind].map((r) => r.p50)),
      p99: median(acks[shape][kind].map((r) => r.p99))
    })

    // 2. The fetcher draining files of 100 KB posted at once, 10 to a webhook.
    const before = await counts()
    const fetchStarted = Date.now()
    const cpuBefore = Processes.cpuSeconds(server.process.pid)
    for (let sent = 0; sent < FILES; sent += 10) {
      const { body, headers } = webhook(10, (n) => `small-${n % 1_000}`)
      const reply = await fetch(`${server.url}/webhooks/whatsapp`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body
      })
      if (reply.status !== 200) throw new Error(`webhook answered ${reply.status}`)
    }
    await drained()
    const fetchSeconds = (Date.now() - fetchStarted) / 1000
    const after = await counts()
    const kept = after.stored - before.stored
    // CPU per file is steadier than files per second on a shared machine: it says what a file costs.
    const cpuPerFile = ((Processes.cpuSeconds(server.process.pid) - cpuBefore) * 1000) / Math.max(1, kept)
    log(
      `fetch: ${kept} of ${FILES} kept in ${fetchSeconds.toFixed(1)} s (${(kept / fetchSeconds).toFixed(0)}/s), ${after.failed - before.failed} failed; server CPU ${cpuPerFile.toFixed(2)} ms per file (its webhooks included)`
    )

    // 3. Files of 5 MB, the resident set sampled while they are kept.
    const idle = Processes.residentMB(server.process.pid)
    const samples: Array<number> = []
    const sampler = setInterval(() => samples.push(Processes.residentMB(server.process.pid)), 1_000)
    const largeStarted = Date.now()
    let next = 0
    for (let sent = 0; sent < LARGE; sent += 10) {
      const { body, headers } = webhook(Math.min(10, LARGE - sent), () => `large-${next++}`)
      await fetch(`${server.url}/webhooks/whatsapp`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body
      })
    }
    await drained(1_200_000)
    clearInterval(sampler)
    const largeSeconds = (Date.now() - largeStarted) / 1000
    const final = await counts()
    const largeKept = final.stored - after.stored
    const peak = Math.max(idle, ...samples)
    const rest = Processes.residentMB(server.process.pid)
    log(
      `large: ${largeKept} of ${LARGE} kept in ${largeSeconds.toFixed(1)} s; resident ${idle} MB before, peak ${peak} MB, ${rest} MB after`
    )

    const text = ack("saturated", "text")
    const media = ack("saturated", "media")
    const steadyText = ack("steady", "text")
    const steadyMedia = ack("steady", "media")
    writeFileSync(
      join(here, "MEDIA.md"),
      `# Inbound media benchmark (issue 32)

\`npm run bench:messaging\` (its media part, \`src/Media.ts\`) on ${new Date().toISOString().slice(0, 10)}: ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores,
PostgreSQL; ${Processes.pinning}. One server with \`WHATSAPP_TRANSPORT=cloud\` against a loopback MockGraph
(\`packages/testkit/src/whatsapp/MockGraph.ts\`) that serves every file; files kept in a directory
(\`LEADLINE_MEDIA_STORE=fs\`). Counts are read in the database.

| what | result | target |
|---|---|---|
| ack of one message per signed POST, text only, ${CONNECTIONS} connections, ${SECONDS} s, median of ${ROUNDS} | ${text.rate.toFixed(0)} POSTs/s; p50 ${text.p50} ms, p99 ${text.p99} ms | |
| the same with every third message an image of 100 KB (its fetch running meanwhile) | ${media.rate.toFixed(0)} POSTs/s; p50 ${media.p50} ms, p99 ${media.p99} ms | |
| text only, offered at a steady ${ACK_RATE} POSTs/s | ${steadyText.rate.toFixed(0)} POSTs/s; p50 ${steadyText.p50} ms, p99 ${steadyText.p99} ms | |
| every third message an image, at the same ${ACK_RATE} POSTs/s | ${steadyMedia.rate.toFixed(0)} POSTs/s; p50 ${steadyMedia.p50} ms, p99 ${steadyMedia.p99} ms | p99 unchanged (≤ 1.2× text's) |
| one server's fetcher: ${FILES} images of 100 KB posted at once (10 per webhook), until every one is kept | ${kept} kept in ${fetchSeconds.toFixed(1)} s: ${(kept / fetchSeconds).toFixed(0)} files/s (${after.failed - before.failed} failed); the server's CPU ${cpuPerFile.toFixed(2)} ms per file, its webhooks included | ≥ 200 files/s |
| ${LARGE} images of 5 MB, the server's resident set sampled every second | ${largeKept} kept in ${largeSeconds.toFixed(1)} s; resident ${idle} MB before, ${peak} MB at most, ${rest} MB after | flat (streamed) |
`
    )
    log("wrote bench/MEDIA.md")
  } finally {
    for (const process of running.reverse()) await process.stop()
    await graph.close()
    await db.drop()
    rmSync(mediaDir, { recursive: true, force: true })
  }
}

await main()
