/**
 * `npm run bench:agent-latency -w @leadline/bench`: how long an inbound WhatsApp text waits for
 * its agent's reply to be queued, as the server measures it (the reply's `created_at` minus the
 * inbound message's), on PostgreSQL. One signed webhook per message, one message at a time,
 * each from a new customer, so every reply is one job and nothing queues behind another.
 *
 * `AGENT_LATENCY_BEFORE=<dir>` also runs the server of another checkout (a `git worktree` with its
 * own `npm ci`) in the same run, for a before/after. Writes bench/AGENT-LATENCY.md.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as MetaSignature from "@leadline/whatsapp-adapter/meta/MetaSignature"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import * as Checkout from "./Checkout.ts"
import * as Postgres from "./Postgres.ts"
import * as Processes from "./Processes.ts"
import { post } from "./Http.ts"

const SECRET = "bench-app-secret"
const NUMBER = "100200301"
const MESSAGES = Number(process.env.AGENT_LATENCY_MESSAGES ?? 60)
const here = join(import.meta.dirname, "..")

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

const measure = async (label: string, checkout: string | undefined) => {
  const db = await Postgres.freshDatabase("agent_latency")
  const server = await Processes.leadline(
    db.url,
    { WHATSAPP_APP_SECRET: SECRET, WHATSAPP_VERIFY_TOKEN: "bench", WHATSAPP_SENDER_ENABLED: "false" },
    checkout
  )
  try {
    const account = await post(server.url, "/admin/v1/accounts", Processes.ADMIN_TOKEN, {
      name: "Agents",
      plan_id: "scale"
    })
    const key = account.api_key as string
    await post(server.url, "/api/v1/channels", key, {
      type: "whatsapp",
      name: "Bench",
      phone_number_id: NUMBER,
      display_phone_number: "+16505551111",
      access_token: "bench"
    })
    const source = await post(server.url, "/api/v1/knowledge/sources", key, {
      kind: "text",
      title: "Delivery",
      content: "We deliver in Campinas on Saturdays. Delivery costs R$ 12."
    })
    await post(server.url, "/api/v1/agents", key, {
      name: "Ana",
      instructions: "You are Ana, the assistant of Padaria Boa. Be brief and friendly.",
      enabled: true,
      knowledge_source_ids: [source.id]
    })
    for (let i = 0; i < MESSAGES; i++) {
      const body = MetaPayloads.inboundTextPayload({
        phoneNumberId: NUMBER,
        displayPhoneNumber: "16505551111",
        from: `5511987${String(100000 + i)}`,
        name: "Customer",
        text: "When do you deliver in Campinas?",
        externalId: `wamid.latency.${i}`,
        timestamp: new Date()
      })
      const response = await fetch(`${server.url}/webhooks/whatsapp`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-hub-signature-256": MetaSignature.sign(SECRET, body) },
        body
      })
      if (!response.ok) throw new Error(`webhook: ${response.status}`)
      // A pause unlike the responder's poll interval, so the polling path is met at every phase.
      await new Promise((resolve) => setTimeout(resolve, 137))
    }
    // Every job done (answered or handed off), then the latencies from the server's own timestamps.
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline) {
      const [row] = await Postgres.query<{ n: string }>(
        db.url,
        "SELECT count(*) AS n FROM agent_jobs WHERE status <> 'done'"
      )
      if (Number(row!.n) === 0) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const rows = await Postgres.query<{ ms: number }>(
      db.url,
      `SELECT extract(epoch FROM (r.created_at - i.created_at)) * 1000 AS ms
       FROM messages i JOIN messages r ON r.conversation_id = i.conversation_id AND r.account_id = i.account_id
       WHERE i.direction = 'inbound' AND r.direction = 'outbound' AND r.sender_type = 'agent'`
    )
    const latencies = rows.map((row) => Number(row.ms)).sort((a, b) => a - b)
    if (latencies.length === 0) throw new Error(`${label}: no agent replied`)
    const result = {
      label,
      replies: latencies.length,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99)
    }
    console.log(
      `${label}: ${result.replies} replies, inbound to queued reply p50 ${result.p50.toFixed(0)} ms, p99 ${result.p99.toFixed(0)} ms`
    )
    return result
  } finally {
    await server.stop()
    await db.drop()
  }
}

const main = async () => {
  const before = process.env.AGENT_LATENCY_BEFORE
  const results = []
  if (before !== undefined) results.push(await measure(`before (${before})`, before))
  results.push(await measure(`this checkout (${Checkout.describe()})`, undefined))
  const table = results
    .map((r) => `| ${r.label} | ${r.replies} | ${r.p50.toFixed(0)} ms | ${r.p99.toFixed(0)} ms |`)
    .join("\n")
  writeFileSync(
    join(here, "AGENT-LATENCY.md"),
    `# Agent reply latency

\`npm run bench:agent-latency -w @leadline/bench\` (bench/src/AgentLatency.ts): ${MESSAGES} inbound WhatsApp texts,
one signed webhook each, 137 ms apart, each from a new customer, on PostgreSQL; the builtin model
answers from one knowledge source. Latency is the reply's \`created_at\` minus the inbound
message's, both stamped by the server.

| server | replies | p50 | p99 |
|---|---|---|---|
${table}
`
  )
}

await main()
process.exit(0)
