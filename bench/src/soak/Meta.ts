import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import * as MetaSignature from "@leadline/whatsapp-adapter/meta/MetaSignature"
import { type Api, DROPPED, HUNG, sleep } from "./Api.ts"
import type { Attempt } from "./GraphProtocol.ts"

/**
 * Meta's side of the webhook: customers' texts and carts in signed batches at a steady rate, and
 * the statuses of every message Graph took, with Meta's habits: an item delivered again in a later
 * POST, a POST acknowledged and delivered again anyway, and every POST not acknowledged with a 200
 * retried until it is (Meta retries for days). What each message was, and each POST's fate, are
 * kept for the invariants.
 */

export interface Customer {
  /** Digits, as Meta sends `from`. */
  readonly waId: string
  readonly name: string
  /** The lead the soak made for it through the API, if it did. */
  readonly leadId: string | undefined
}

export interface Inbound {
  readonly wamid: string
  readonly kind: "text" | "order"
  readonly from: string
  /** A cart's units of the hot product. */
  readonly units: number
  acknowledged: boolean
}

/** How Meta's statuses leave a message Graph took: what the message must show at the end. */
export type Planned = "sent" | "delivered" | "read" | "failed"

export interface Options {
  readonly api: Api
  readonly appSecret: string
  readonly phoneNumberId: string
  readonly displayPhoneNumber: string
  readonly sku: string
  /** The customers the soak made leads for (they may get API sends once they wrote). */
  readonly customers: ReadonlyArray<Customer>
  /** New inbound messages a second. */
  readonly perSecond: number
}

const QUESTIONS = [
  "When do you deliver?",
  "How much does delivery cost?",
  "Do you deliver on Saturdays?",
  "Is delivery free above R$ 150?",
  "What time do you open tomorrow?",
  "Olá! Vocês entregam hoje? 😀"
]

const TICK_MILLIS = 250
const DUPLICATE_ITEM = 0.05
const REPEAT_POST = 0.03
const STATUS_DUPLICATE = 0.05

export class Meta {
  readonly inbound = new Map<string, Inbound>()
  /** Graph's wamid → what Meta's statuses will leave the message at. */
  readonly planned = new Map<string, { readonly callbackData: string; readonly planned: Planned }>()
  /** Leads of the soak's customers whose first message was acknowledged: their window is open. */
  readonly written = new Set<string>()
  readonly figures = {
    posts: 0,
    messagePosts: 0,
    statusPosts: 0,
    retries: 0,
    repeatedAfter200: 0,
    duplicateItems: 0,
    statusItems: 0,
    duplicateStatuses: 0,
    refused: [] as Array<string>
  }
  private running = true
  private closed = false
  private inFlight = 0
  private sequence = 0
  private newCustomers: Array<Customer> = []
  private recent: Array<{ readonly customer: Customer; readonly item: Record<string, unknown> }> = []
  private statuses: Array<{ readonly due: number; readonly status: MetaPayloads.StatusOptions }> = []
  private postedStatuses: Array<MetaPayloads.StatusOptions> = []
  private loops: Array<Promise<void>> = []

  private readonly options: Options

  constructor(options: Options) {
    this.options = options
  }

  start() {
    this.loops = [this.messageLoop(), this.statusLoop()]
  }

  /** No new customer messages; statuses and retries go on until `idle`. */
  stopMessages() {
    this.running = false
  }

  /** No more statuses either (once the sends have settled). */
  close() {
    this.running = false
    this.closed = true
  }

  /** Nothing in flight and no status waiting. */
  idle(): boolean {
    return this.inFlight === 0 && this.statuses.length === 0
  }

  pending() {
    return { posts: this.inFlight, statuses: this.statuses.length }
  }

  /** Plans Meta's statuses for the sends Graph took (called with each batch Graph reports). */
  onGraph(attempts: ReadonlyArray<Attempt>) {
    for (const attempt of attempts) {
      if (attempt.wamid === null || attempt.phoneNumberId !== this.options.phoneNumberId) continue
      const roll = Math.random()
      const planned: Planned = roll < 0.6 ? "delivered" : roll < 0.75 ? "read" : roll < 0.95 ? "sent" : "failed"
      this.planned.set(attempt.wamid, { callbackData: attempt.callbackData, planned })
      const status = (status: MetaPayloads.StatusOptions["status"], error?: MetaPayloads.StatusOptions["error"]) => ({
        externalId: attempt.wamid!,
        status,
        recipientId: attempt.to,
        callbackData: attempt.callbackData,
        timestamp: new Date(),
        ...(error === undefined ? {} : { error })
      })
      const first = Date.now() + Math.random() * 300
      const later = first + 300 + Math.random() * 2_700
      const steps: Array<MetaPayloads.StatusOptions> = [status("sent")]
      if (planned === "delivered") steps.push(status("delivered"))
      if (planned === "read") steps.push(status("read"))
      if (planned === "failed") {
        steps.push(status("failed", { code: 131026, title: "Message undeliverable", message: "Message undeliverable" }))
      }
      // Meta's statuses may come out of order: a delivered or read before its sent is merged all the same.
      if (planned !== "failed" && steps.length === 2 && Math.random() < 0.1) steps.reverse()
      for (const [i, step] of steps.entries()) this.statuses.push({ due: i === 0 ? first : later, status: step })
    }
  }

  private customer(): Customer {
    const { customers } = this.options
    const roll = Math.random()
    if (roll < 0.7 && customers.length > 0) return customers[Math.floor(Math.random() * customers.length)]!
    if (roll < 0.8 && this.newCustomers.length > 0) {
      return this.newCustomers[Math.floor(Math.random() * this.newCustomers.length)]!
    }
    const n = this.newCustomers.length
    const customer = { waId: `552198${1_000_000 + n}`, name: `New customer ${n}`, leadId: undefined }
    this.newCustomers.push(customer)
    return customer
  }

  private message(): { readonly customer: Customer; readonly item: Record<string, unknown> } {
    const customer = this.customer()
    const wamid = `wamid.soak.in.${++this.sequence}`
    const timestamp = String(Math.floor(Date.now() / 1000))
    if (Math.random() < 1 / 12) {
      const units = 1 + Math.floor(Math.random() * 2)
      this.inbound.set(wamid, { wamid, kind: "order", from: customer.waId, units, acknowledged: false })
      return {
        customer,
        item: {
          from: customer.waId,
          id: wamid,
          timestamp,
          type: "order",
          order: {
            catalog_id: "soak-catalog",
            product_items: [
              { product_retailer_id: this.options.sku, quantity: units, item_price: 12.9, currency: "BRL" }
            ]
          }
        }
      }
    }
    this.inbound.set(wamid, { wamid, kind: "text", from: customer.waId, units: 0, acknowledged: false })
    const text = QUESTIONS[Math.floor(Math.random() * QUESTIONS.length)]!
    return { customer, item: { from: customer.waId, id: wamid, timestamp, type: "text", text: { body: text } } }
  }

  private async messageLoop() {
    const started = Date.now()
    while (this.running) {
      // Steady: the messages due by now, whatever the last POST cost.
      const due = Math.floor(((Date.now() - started) / 1000) * this.options.perSecond) - this.sequence
      const batch: Array<{ readonly customer: Customer; readonly item: Record<string, unknown> }> = []
      for (let i = 0; i < Math.min(due, 20); i++) batch.push(this.message())
      if (this.recent.length > 0 && Math.random() < DUPLICATE_ITEM * Math.max(1, batch.length)) {
        batch.push(this.recent[Math.floor(Math.random() * this.recent.length)]!)
        this.figures.duplicateItems++
      }
      if (batch.length > 0) {
        this.recent.push(...batch)
        if (this.recent.length > 200) this.recent.splice(0, this.recent.length - 200)
        const contacts = new Map(
          batch.map(({ customer }) => [customer.waId, { profile: { name: customer.name }, wa_id: customer.waId }])
        )
        const bytes = MetaPayloads.messagesChangePayload(this.options.phoneNumberId, this.options.displayPhoneNumber, {
          contacts: [...contacts.values()],
          messages: batch.map(({ item }) => item)
        })
        this.figures.messagePosts++
        void this.deliver(bytes, () => {
          for (const { customer, item } of batch) {
            this.inbound.get(item.id as string)!.acknowledged = true
            if (customer.leadId !== undefined) this.written.add(customer.leadId)
          }
        })
      }
      await sleep(TICK_MILLIS)
    }
  }

  private async statusLoop() {
    while (!this.closed) {
      const now = Date.now()
      const due = this.statuses.filter((entry) => entry.due <= now)
      this.statuses = this.statuses.filter((entry) => entry.due > now)
      for (let i = 0; i < due.length; i += 50) {
        const chunk = due.slice(i, i + 50).map((entry) => entry.status)
        if (this.postedStatuses.length > 0 && Math.random() < STATUS_DUPLICATE * chunk.length) {
          chunk.push(this.postedStatuses[Math.floor(Math.random() * this.postedStatuses.length)]!)
          this.figures.duplicateStatuses++
        }
        this.postedStatuses.push(...chunk)
        if (this.postedStatuses.length > 500) this.postedStatuses.splice(0, this.postedStatuses.length - 500)
        this.figures.statusItems += chunk.length
        this.figures.statusPosts++
        void this.deliver(
          MetaPayloads.statusesPayload(this.options.phoneNumberId, this.options.displayPhoneNumber, chunk),
          () => undefined
        )
      }
      await sleep(200)
    }
  }

  /** One POST as Meta makes it: retried until a 200; sometimes delivered again after its 200. */
  private async deliver(bytes: Uint8Array, acknowledged: () => void, repeat = true): Promise<void> {
    this.inFlight++
    const signature = MetaSignature.sign(this.options.appSecret, bytes)
    try {
      for (let attempt = 0; ; attempt++) {
        this.figures.posts++
        const reply = await this.options.api.request("POST", "/webhooks/whatsapp", {
          bytes,
          headers: { "x-hub-signature-256": signature }
        })
        if (reply.status === 200) break
        // The soak is over: what was never acknowledged stays so, and the invariants say it.
        if (this.closed) return
        if (reply.status !== DROPPED && reply.status !== HUNG && reply.status < 500) {
          // Signed and well formed: a refusal is a defect, and Meta would retry it in vain.
          this.figures.refused.push(`${reply.status} ${JSON.stringify(reply.body)}`)
          return
        }
        this.figures.retries++
        await sleep(Math.min(5_000, 250 * 2 ** attempt))
      }
      acknowledged()
      if (repeat && Math.random() < REPEAT_POST) {
        this.figures.repeatedAfter200++
        this.inFlight++
        void sleep(500 + Math.random() * 2_500)
          .then(() => this.deliver(bytes, () => undefined, false))
          .finally(() => this.inFlight--)
      }
    } finally {
      this.inFlight--
    }
  }

  async stopped() {
    await Promise.all(this.loops)
  }
}
