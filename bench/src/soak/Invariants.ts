import { existsSync, readFileSync } from "node:fs"
import * as Postgres from "../Postgres.ts"
import { type Api, DROPPED, HUNG } from "./Api.ts"
import type { Faults } from "./Faults.ts"
import { type Attempt, TAKES, UNKNOWN } from "./GraphProtocol.ts"
import type { Ledger } from "./Idempotent.ts"
import type { Leads } from "./Leads.ts"
import type { Meta } from "./Meta.ts"
import type { Orders } from "./Orders.ts"
import type { Outbound } from "./Outbound.ts"
import { PHONE_NUMBER_ID, SHOP_EVENTS, type Shop } from "./Shop.ts"

/**
 * The soak's invariants, checked once the load has settled: each is held or broken, with the
 * figures it was judged on. The database is read directly (the soak's own cluster); what a caller
 * sees (usage, campaign stats, stock) is read through the API.
 */

export interface Verdict {
  readonly name: string
  readonly held: boolean
  readonly figures: ReadonlyArray<string>
}

export interface Inputs {
  readonly databaseUrl: string
  readonly api: Api
  readonly shop: Shop
  readonly leadsAccount: { readonly accountId: string; readonly key: string; readonly endpointId: string }
  readonly meta: Meta
  readonly attempts: ReadonlyArray<Attempt>
  readonly outbound: Outbound
  readonly orders: Orders
  readonly leads: Leads
  readonly receiver: {
    readonly delivered: ReadonlySet<string>
    readonly stats: () => { attempts: number; failures: number }
  }
  readonly faults: Faults
  /** The PostgreSQL server's log, when the soak runs its own cluster: a deadlock's cycle is there. */
  readonly postgresLog: string | undefined
}

const examples = (items: ReadonlyArray<string>, n = 5) =>
  items.length === 0 ? [] : [`e.g. ${items.slice(0, n).join("; ")}${items.length > n ? ` (+${items.length - n})` : ""}`]

const count = <A>(items: Iterable<A>, key: (a: A) => string) => {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1)
  return counts
}

const describe = (counts: Map<string, number>) =>
  [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(", ")

export const check = async (inputs: Inputs): Promise<ReadonlyArray<Verdict>> => {
  const { shop, meta, api, faults } = inputs
  const q = <A>(text: string, params: Array<unknown> = []) => Postgres.query<A>(inputs.databaseUrl, text, params)
  const verdicts: Array<Verdict> = []
  const add = (name: string, held: boolean, figures: ReadonlyArray<string>) => verdicts.push({ name, held, figures })

  // 1. Inbound: every wamid Meta sent is stored once, and announced once.
  {
    const stored = count(
      await q<{ w: string }>("SELECT external_id AS w FROM messages WHERE account_id = $1 AND direction = 'inbound'", [
        shop.accountId
      ]),
      (row) => row.w
    )
    const received = count(
      await q<{ w: string }>(
        "SELECT payload->'data'->>'external_id' AS w FROM events WHERE account_id = $1 AND type = 'message.received'",
        [shop.accountId]
      ),
      (row) => row.w
    )
    const sent = [...meta.inbound.values()]
    const missing = sent.filter((m) => !stored.has(m.wamid)).map((m) => m.wamid)
    const doubled = [...stored].filter(([, n]) => n > 1).map(([w]) => w)
    const strangers = [...stored.keys()].filter((w) => !meta.inbound.has(w))
    const unacknowledged = sent.filter((m) => !m.acknowledged).map((m) => m.wamid)
    const announced = [...received].filter(([, n]) => n !== 1).map(([w]) => w)
    const silent = sent.filter((m) => !received.has(m.wamid)).map((m) => m.wamid)
    const f = meta.figures
    add(
      "every inbound wamid stored exactly once, none lost",
      missing.length === 0 &&
        doubled.length === 0 &&
        strangers.length === 0 &&
        unacknowledged.length === 0 &&
        announced.length === 0 &&
        silent.length === 0 &&
        f.refused.length === 0,
      [
        `${sent.length} messages sent by Meta (${sent.filter((m) => m.kind === "text").length} texts, ${sent.filter((m) => m.kind === "order").length} carts), ${stored.size} stored; missing ${missing.length}, stored twice ${doubled.length}, unknown ${strangers.length}, never acknowledged ${unacknowledged.length}`,
        `${f.messagePosts} message POSTs and ${f.statusPosts} status POSTs (${f.statusItems} statuses); ${f.posts} attempts in all, ${f.retries} retried after a 503 or a dropped connection, ${f.repeatedAfter200} delivered again after their 200, ${f.duplicateItems} items repeated in a later POST, ${f.duplicateStatuses} statuses repeated`,
        `message.received: ${[...received.values()].reduce((a, b) => a + b, 0)} events, messages without exactly one: ${announced.length + silent.length}; refused POSTs: ${f.refused.length}`,
        ...examples([...missing, ...doubled, ...unacknowledged, ...announced, ...silent, ...f.refused])
      ]
    )
  }

  // What Graph saw, per message (phone number id and Leadline's id as callback data), in arrival order.
  const byMessage = new Map<string, Array<Attempt>>()
  for (const attempt of [...inputs.attempts].sort((a, b) => a.at - b.at)) {
    if (attempt.phoneNumberId !== PHONE_NUMBER_ID) continue
    const list = byMessage.get(attempt.callbackData) ?? []
    list.push(attempt)
    byMessage.set(attempt.callbackData, list)
  }

  // 2. No message sent twice: at most one take per message, and no request after an answer that
  // took it or left its fate unknown (the sender never resends those, contract-messaging §6.3, §7.3).
  {
    const twice: Array<string> = []
    const resent: Array<string> = []
    for (const [id, list] of byMessage) {
      if (list.filter((a) => TAKES.has(a.answer)).length > 1) twice.push(id)
      const first = list.findIndex((a) => TAKES.has(a.answer) || UNKNOWN.has(a.answer))
      if (first >= 0 && first < list.length - 1) {
        resent.push(`${id}: ${list.map((a) => a.answer).join(" → ")}`)
      }
    }
    const answers = count(inputs.attempts, (a) => a.answer)
    const retried = [...byMessage.values()].filter((list) => list.length > 1).length
    add("no message sent to Graph twice", twice.length === 0 && resent.length === 0, [
      `${inputs.attempts.length} sends reached Graph for ${byMessage.size} messages (${retried} sent again after a refusal); answers: ${describe(answers)}`,
      `messages Graph took twice: ${twice.length}; sent again after an answer that took them or left them unknown: ${resent.length}`,
      ...examples(resent)
    ])
  }

  const outbound = await q<{
    id: string
    status: string
    code: string | null
    provider_code: number | null
    external_id: string | null
    sender_type: string
    campaign_id: string | null
    error: string | null
  }>(
    `SELECT id, status, error->>'code' AS code, (error->>'provider_code')::int AS provider_code, external_id,
            sender_type, campaign_id, error->>'message' AS error
     FROM messages WHERE account_id = $1 AND direction = 'outbound'`,
    [shop.accountId]
  )

  // 3. Every outbound message ended, none stuck, and each as Graph and Meta's statuses left it.
  {
    const stuck = outbound.filter((m) => m.status === "queued").map((m) => m.id)
    const wrong: Array<string> = []
    let takenUnread = 0
    const unknownAfter = new Map<string, number>()
    let interrupted = 0
    let refusedOut = 0
    for (const message of outbound) {
      if (message.status === "queued") continue
      const list = byMessage.get(message.id) ?? []
      const taken = list.find((a) => TAKES.has(a.answer))
      if (message.code === "outcome_unknown" && /stopped during the send/.test(message.error ?? "")) interrupted++
      if (taken !== undefined) {
        const plan = meta.planned.get(taken.wamid!)
        const expected = plan?.planned ?? "sent"
        const ok =
          message.external_id === taken.wamid &&
          (expected === "failed"
            ? message.status === "failed" && message.provider_code === 131026
            : message.status === expected)
        if (!ok) {
          wrong.push(
            `${message.id} (${message.sender_type}) Graph took it (${list.map((a) => a.answer).join(" → ")}), Meta said ${expected}, it shows ${message.status}${message.code === null ? "" : `/${message.code}`}${message.external_id === taken.wamid ? "" : `, external_id ${message.external_id}`}`
          )
        }
        if (list.some((a) => UNKNOWN.has(a.answer))) takenUnread++
        continue
      }
      // Graph never took it: it must have failed (cancelled would do), never be shown as sent.
      const last = list.at(-1)
      const ok =
        message.status === "cancelled" ||
        (message.status === "failed" &&
          (message.code === "outcome_unknown" ||
            (message.code === "provider_error" && (last === undefined || !UNKNOWN.has(last.answer)))))
      if (!ok) {
        wrong.push(
          `${message.id} (${message.sender_type}) Graph never took it (${list.map((a) => a.answer).join(" → ") || "no request"}), it shows ${message.status}${message.code === null ? "" : `/${message.code}`}`
        )
      }
      if (message.code === "outcome_unknown") {
        // What the sender last met at Graph: a hang or a 500 page; a refusal whose retry was never
        // recorded (the store away, the sender killed); or nothing (it died before the request left).
        const why =
          last === undefined
            ? "no request at Graph"
            : UNKNOWN.has(last.answer)
              ? `a ${last.answer}`
              : "a refusal, then no record"
        unknownAfter.set(why, (unknownAfter.get(why) ?? 0) + 1)
      }
      if (message.code === "provider_error") refusedOut++
    }
    add(
      "every outbound message ended in a final state or outcome_unknown, none stuck, each as Graph and Meta left it",
      stuck.length === 0 && wrong.length === 0,
      [
        `${outbound.length} outbound messages: ${describe(count(outbound, (m) => m.sender_type))}; ${describe(count(outbound, (m) => (m.code === null ? m.status : `${m.status}/${m.code}`)))}`,
        `still queued: ${stuck.length}; outcome_unknown (Graph never took them), by what the sender last met: ${unknownAfter.size === 0 ? "none" : describe(unknownAfter)}; ${interrupted} of them ended by a sender that stopped mid-send`,
        `taken by Graph with an answer the sender could not read (late, 502 page), each as Meta's statuses left it: ${takenUnread}; failed by Graph's refusals 10 times: ${refusedOut}`,
        `not as Graph and Meta left them: ${wrong.length}`,
        ...examples([...stuck, ...wrong])
      ]
    )
  }

  // 4. Each message announced as sent once at most.
  {
    const announced = count(
      await q<{ id: string }>(
        "SELECT payload->'data'->>'id' AS id FROM events WHERE account_id = $1 AND type = 'message.sent'",
        [shop.accountId]
      ),
      (row) => row.id
    )
    const twice = [...announced].filter(([, n]) => n > 1).map(([id]) => id)
    add("each outbound message announced sent (message.sent) once at most", twice.length === 0, [
      `${announced.size} messages announced, ${twice.length} twice or more`,
      ...examples(twice)
    ])
  }

  // 5. Usage: what the API says is used = the outbound messages that count this month.
  {
    const used = async (key: string) =>
      (await api.request("GET", "/api/usage", { auth: key, route: "GET /api/usage" })).body?.usage?.messages_used
    const counting = async (accountId: string) =>
      Number(
        (
          await q<{ n: number }>(
            `SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND direction = 'outbound'
               AND status NOT IN ('failed', 'cancelled')
               AND date_trunc('month', created_at AT TIME ZONE 'UTC') = date_trunc('month', now() AT TIME ZONE 'UTC')`,
            [accountId]
          )
        )[0]!.n
      )
    const shopUsed = await used(shop.key)
    const shopCounting = await counting(shop.accountId)
    const leadsUsed = await used(inputs.leadsAccount.key)
    add("messages_used equals the outbound messages that count", shopUsed === shopCounting && leadsUsed === 0, [
      `shop: messages_used ${shopUsed}, outbound messages this month not failed or cancelled ${shopCounting} (of ${outbound.length}); leads account: messages_used ${leadsUsed}, none sent`
    ])
  }

  // 6. Stock.
  {
    const product = (
      await api.request("GET", `/api/v1/catalogue/products/${shop.productId}`, {
        auth: shop.key,
        route: "GET /api/v1/catalogue/products/{id}"
      })
    ).body
    const [sold] = await q<{ units: number; orders: number }>(
      `SELECT coalesce(sum((item->>'quantity')::int), 0)::int AS units, count(DISTINCT o.id)::int AS orders
       FROM orders o CROSS JOIN jsonb_array_elements(o.items) AS item
       WHERE o.account_id = $1 AND o.status <> 'cancelled' AND item->>'product_id' = $2`,
      [shop.accountId, shop.productId]
    )
    const [stripes] = await q<{ lowest: number }>(
      "SELECT min(stock)::int AS lowest FROM product_stock WHERE account_id = $1 AND product_id = $2",
      [shop.accountId, shop.productId]
    )
    const orders = await q<{
      id: string
      status: string
      source: string
      whatsapp_message_id: string | null
      unstocked: boolean
    }>(
      `SELECT id, status, source, whatsapp_message_id, metadata ? 'whatsapp_unstocked_skus' AS unstocked
       FROM orders WHERE account_id = $1`,
      [shop.accountId]
    )
    const placed = new Set(inputs.orders.ledger.ids.values())
    const apiOrders = orders.filter((o) => o.source === "api")
    const lostOrExtra = [
      ...[...placed].filter((id) => !apiOrders.some((o) => o.id === id)).map((id) => `${id} answered 201, not stored`),
      ...apiOrders.filter((o) => !placed.has(o.id)).map((o) => `${o.id} stored, never answered`)
    ]
    const cancelledWrong = [...inputs.orders.cancelled].filter(
      (id) => orders.find((o) => o.id === id)?.status !== "cancelled"
    )
    const carts = [...meta.inbound.values()].filter((m) => m.kind === "order")
    const cartOrders = count(
      orders.filter((o) => o.source === "whatsapp"),
      (o) => o.whatsapp_message_id ?? ""
    )
    const cartsWrong = carts.filter((c) => cartOrders.get(c.wamid) !== 1).map((c) => c.wamid)
    const left = product?.stock as number
    add(
      "stock never negative, and initial stock − units sold = stock left",
      left >= 0 &&
        inputs.orders.lowestStock >= 0 &&
        (stripes?.lowest ?? 0) >= 0 &&
        shop.initialStock - sold!.units === left &&
        lostOrExtra.length === 0 &&
        cancelledWrong.length === 0 &&
        cartsWrong.length === 0,
      [
        `initial ${shop.initialStock} − sold ${sold!.units} (in ${sold!.orders} orders not cancelled) = ${shop.initialStock - sold!.units}; stock left ${left}; lowest read during the run ${inputs.orders.lowestStock} (${inputs.orders.stockReads} reads), lowest stripe ${stripes?.lowest}`,
        `API orders: ${placed.size} placed, ${inputs.orders.cancelled.size} cancelled, ${inputs.orders.insufficient} refused insufficient_stock; stored ${apiOrders.length}, lost or extra ${lostOrExtra.length}; cancels not stored ${cancelledWrong.length}`,
        `WhatsApp carts: ${carts.length}, orders placed from them ${cartOrders.size} (${orders.filter((o) => o.source === "whatsapp" && o.unstocked).length} without stock, as custom lines); carts without exactly one order ${cartsWrong.length}`,
        ...examples([...lostOrExtra, ...cancelledWrong, ...cartsWrong])
      ]
    )
  }

  // 7. Campaigns: stats partition the recipients, and agree with the messages.
  {
    const wrong: Array<string> = []
    const lines: Array<string> = []
    for (const id of inputs.outbound.campaignIds) {
      const campaign = (
        await api.request("GET", `/api/v1/campaigns/${id}`, { auth: shop.key, route: "GET /api/v1/campaigns/{id}" })
      ).body
      const s = campaign?.stats ?? {}
      const byStatus = count(
        outbound.filter((m) => m.campaign_id === id),
        (m) => m.status
      )
      const sentInDb = (byStatus.get("sent") ?? 0) + (byStatus.get("delivered") ?? 0) + (byStatus.get("read") ?? 0)
      const parts = s.queued + s.sent + s.failed + s.skipped + s.cancelled
      lines.push(
        `${id}: ${campaign?.status}, total ${s.total} (audience ${shop.promoLeads.length}) = queued ${s.queued} + sent ${s.sent} + failed ${s.failed} + skipped ${s.skipped} + cancelled ${s.cancelled} = ${parts}; delivered ${s.delivered}, read ${s.read}; its messages: ${describe(byStatus)}`
      )
      if (
        campaign?.status !== "completed" ||
        s.total !== shop.promoLeads.length ||
        parts !== s.total ||
        s.queued !== 0 ||
        s.sent !== sentInDb ||
        s.failed !== (byStatus.get("failed") ?? 0)
      ) {
        wrong.push(id)
      }
    }
    add("each campaign's stats add up to its recipients", wrong.length === 0 && lines.length > 0, lines)
  }

  // 8. Events: each one an endpoint subscribed to was delivered at least once, or marked failed.
  {
    const endpoint = async (accountId: string, endpointId: string, types: ReadonlyArray<string>) => {
      const events = await q<{ id: string; has: boolean }>(
        `SELECT e.id, EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.endpoint_id = $2) AS has
         FROM events e WHERE e.account_id = $1 AND e.type = ANY($3)
           AND e.created_at >= (SELECT created_at FROM webhook_endpoints WHERE id = $2)`,
        [accountId, endpointId, types]
      )
      const deliveries = await q<{ status: string; event_id: string }>(
        "SELECT status, event_id FROM webhook_deliveries WHERE endpoint_id = $1",
        [endpointId]
      )
      return {
        events: events.length,
        withoutDelivery: events.filter((e) => !e.has).map((e) => e.id),
        deliveries: deliveries.length,
        byStatus: count(deliveries, (d) => d.status),
        unseen: deliveries
          .filter((d) => d.status === "delivered" && !inputs.receiver.delivered.has(d.event_id))
          .map((d) => d.event_id)
      }
    }
    const shopSide = await endpoint(shop.accountId, shop.endpointId, SHOP_EVENTS)
    const leadsSide = await endpoint(inputs.leadsAccount.accountId, inputs.leadsAccount.endpointId, [
      "lead.created",
      "lead.deleted"
    ])
    const broken = [shopSide, leadsSide].flatMap((side) => [
      ...side.withoutDelivery,
      ...side.unseen,
      ...(side.byStatus.get("pending") ? [`${side.byStatus.get("pending")} pending`] : [])
    ])
    const receiver = inputs.receiver.stats()
    add("every event delivered at least once or marked failed", broken.length === 0, [
      `shop: ${shopSide.events} events, ${shopSide.deliveries} deliveries (${describe(shopSide.byStatus)}); leads: ${leadsSide.events} events, ${leadsSide.deliveries} deliveries (${describe(leadsSide.byStatus)})`,
      `receiver: ${receiver.attempts} attempts, ${receiver.failures} refused with a 500; events without a delivery, delivered but never received, or still pending: ${broken.length}`,
      ...examples(broken)
    ])
  }

  // 9. The callers' view: no 5xx and no dropped connection outside the faults; nothing hung.
  {
    const calls = api.calls
    const failed = calls.filter((c) => c.status >= 500 || c.status === DROPPED)
    const forgiven = count(
      failed.filter((c) => faults.forgiven(c) !== undefined),
      (c) => `${faults.forgiven(c)} ${c.status === DROPPED ? "dropped" : c.status}`
    )
    const stray = failed.filter((c) => faults.forgiven(c) === undefined)
    const hung = calls.filter((c) => c.status === HUNG)
    const calm = calls.filter((c) => c.status !== HUNG && faults.forgiven(c) === undefined).map((c) => c.end - c.start)
    const sorted = [...calm].sort((a, b) => a - b)
    const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? 0
    const recovery = faults.pgRecovery(calls)
    add(
      "no 5xx and no dropped connection outside the faults; no request hung",
      stray.length === 0 && hung.length === 0,
      [
        `${calls.length} requests; failed inside a fault's window: ${forgiven.size === 0 ? "none" : describe(forgiven)}; outside: ${stray.length}; hung: ${hung.length}`,
        `latency outside the faults: p99 ${p99} ms, max ${sorted.at(-1) ?? 0} ms; the last failure after PostgreSQL came back: ${recovery === undefined ? "n/a" : `${(recovery / 1000).toFixed(1)} s`}`,
        ...examples(
          [...stray, ...hung].map(
            (c) =>
              `${c.route} on server ${c.server} at ${new Date(c.start).toISOString().slice(11, 23)}: ${c.status}${c.detail === undefined ? "" : ` (${c.detail})`}`
          )
        )
      ]
    )
  }

  // 10. Idempotency: no key ran twice, in either account.
  {
    const ledgers: Array<[string, string, Ledger]> = [
      ["leads", inputs.leadsAccount.accountId, inputs.leads.ledger],
      ["sends", shop.accountId, inputs.outbound.sends],
      ["orders", shop.accountId, inputs.orders.ledger],
      ["campaigns", shop.accountId, inputs.outbound.campaigns]
    ]
    const violations: Array<string> = []
    const lines: Array<string> = []
    for (const [name, accountId, ledger] of ledgers) {
      const stored = await q<{ key: string; id: string }>(
        "SELECT key, body::jsonb->>'id' AS id FROM idempotency_keys WHERE account_id = $1 AND status IN (200, 201)",
        [accountId]
      )
      const mismatched = stored.filter((row) => ledger.ids.has(row.key) && ledger.ids.get(row.key) !== row.id)
      violations.push(...ledger.violations, ...mismatched.map((row) => `${name} key ${row.key} stored ${row.id}`))
      lines.push(
        `${name}: ${ledger.ids.size} keys answered, ${ledger.twins} sent as twins, ${ledger.replays} replays checked`
      )
    }
    // Every API send is one message: as many user messages as keys answered (order notices are the user's too).
    const userSends = outbound.filter((m) => m.sender_type === "user" && m.campaign_id === null)
    const sendIds = new Set(inputs.outbound.sends.ids.values())
    const lostSends = [...sendIds].filter((id) => !userSends.some((m) => m.id === id))
    violations.push(...lostSends.map((id) => `send ${id} answered 201, not stored`))
    add("no idempotency key executed twice", violations.length === 0, [...lines, ...examples(violations)])
  }

  // 11. Leads: the database holds what the 201s said, less the deletes, each announced once.
  {
    const { leads } = inputs
    const accountId = inputs.leadsAccount.accountId
    const inDb = new Set(
      (await q<{ id: string }>("SELECT id FROM leads WHERE account_id = $1", [accountId])).map((r) => r.id)
    )
    const created = new Set(leads.ledger.ids.values())
    const expected = [...created].filter((id) => !leads.deleted.has(id))
    const events = count(
      await q<{ lead: string }>(
        "SELECT payload->'data'->>'id' AS lead FROM events WHERE account_id = $1 AND type = 'lead.created'",
        [accountId]
      ),
      (row) => row.lead
    )
    const held =
      inDb.size === expected.length &&
      expected.every((id) => inDb.has(id)) &&
      events.size === created.size &&
      [...events].every(([id, n]) => n === 1 && created.has(id))
    add("leads in the database = distinct 201s seen (minus deletes), one lead.created each", held, [
      `created ${created.size}, deleted ${leads.deleted.size}, in the database ${inDb.size}; lead.created events ${[...events.values()].reduce((a, b) => a + b, 0)} for ${events.size} leads`
    ])
  }

  // 12. The agent: one job per inbound text, at most one reply per job, whatever Meta repeated.
  {
    const [texts] = await q<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND direction = 'inbound' AND type = 'text'",
      [shop.accountId]
    )
    const jobs = await q<{ outcome: string | null; status: string; held: boolean }>(
      "SELECT outcome, status, lease_until > now() AS held FROM agent_jobs WHERE account_id = $1",
      [shop.accountId]
    )
    const replies = outbound.filter((m) => m.sender_type === "agent").length
    const answered = jobs.filter((j) => j.outcome === "answered").length
    const open = jobs.filter((j) => j.status !== "done")
    add("the agent answers each inbound text once at most", jobs.length === texts!.n && replies === answered, [
      `${texts!.n} inbound texts, ${jobs.length} agent jobs (${describe(count(jobs, (j) => j.outcome ?? "open"))}); ${replies} replies for ${answered} answered`,
      `jobs not done: ${open.length}${open.length === 0 ? "" : ` (${open.filter((j) => j.held).length} held by the lease of a killed process)`}`
    ])
  }

  // 13. Every create of the load was answered as the contract says (the stock's 409 aside).
  {
    const unexpected = [...inputs.outbound.unexpected, ...inputs.orders.unexpected, ...inputs.leads.unexpected]
    add("every create answered as the contract says (no unexpected refusal)", unexpected.length === 0, [
      `sends ${inputs.outbound.unexpected.length}, campaigns and orders ${inputs.orders.unexpected.length}, leads ${inputs.leads.unexpected.length} unexpected answers`,
      ...examples(unexpected)
    ])
  }

  // 14. PostgreSQL broke no deadlock: a victim may be a background loop that retried in silence.
  {
    const [stats] = await q<{ deadlocks: number }>(
      "SELECT deadlocks::int AS deadlocks FROM pg_stat_database WHERE datname = current_database()"
    )
    // Each cycle as PostgreSQL's log tells it: the statements that waited for each other.
    const cycles =
      inputs.postgresLog === undefined || !existsSync(inputs.postgresLog)
        ? []
        : readFileSync(inputs.postgresLog, "utf8")
            .split(/\n(?=\d{4}-\d\d-\d\d )/)
            .filter((entry) => / DETAIL: {2}Process \d+ waits for /.test(entry))
            .map((entry) =>
              entry
                .slice(entry.indexOf("DETAIL:") + 8)
                .replace(/\s+/g, " ")
                .trim()
            )
    add("PostgreSQL detected no deadlock", stats!.deadlocks === 0 && cycles.length === 0, [
      `pg_stat_database.deadlocks for the soak's database: ${stats!.deadlocks} (a backend reports its count within 10 s of going idle); in the server's log: ${inputs.postgresLog === undefined ? "no log (not the soak's own cluster)" : cycles.length}`,
      ...cycles.map((cycle) => `cycle: ${cycle.slice(0, 1500)}`)
    ])
  }

  return verdicts
}
