import { type Api, DROPPED, HUNG, sleep } from "./Api.ts"
import { create, Ledger } from "./Idempotent.ts"
import type { Meta } from "./Meta.ts"
import { PROMO_TAG, type Shop } from "./Shop.ts"

/**
 * What the shop sends on its own: texts through the API to customers whose window is open
 * (idempotent creates, every tenth to both servers at once), and template campaigns to the promo
 * audience. The sender takes both to Graph, with the agent's replies and the order notices.
 */
export class Outbound {
  readonly sends = new Ledger()
  readonly campaigns = new Ledger()
  readonly campaignIds: Array<string> = []
  readonly unexpected: Array<string> = []
  private running = true
  private loop: Promise<void> = Promise.resolve()

  private readonly api: Api
  private readonly shop: Shop
  private readonly meta: Meta
  private readonly giveUpAt: () => number

  constructor(api: Api, shop: Shop, meta: Meta, giveUpAt: () => number) {
    this.api = api
    this.shop = shop
    this.meta = meta
    this.giveUpAt = giveUpAt
  }

  start(perSecond: number) {
    this.loop = this.texts(perSecond)
  }

  async stop() {
    this.running = false
    await this.loop
  }

  private async texts(perSecond: number) {
    for (let i = 0; this.running; i++) {
      const next = Date.now() + 1000 / perSecond
      const written = [...this.meta.written]
      if (written.length > 0) {
        const leadId = written[Math.floor(Math.random() * written.length)]!
        const reply = await create(this.api, this.sends, {
          path: "/api/v1/messages",
          route: "POST /api/v1/messages",
          auth: this.shop.key,
          key: `send-${i}`,
          body: { lead_id: leadId, type: "text", text: `Your order is on its way (${i}).` },
          twins: i % 10 === 0,
          replay: i % 11 === 4,
          giveUpAt: this.giveUpAt()
        })
        if (reply.status !== 201) {
          this.unexpected.push(`POST /api/v1/messages ${reply.status} ${JSON.stringify(reply.body)}`)
        }
      }
      await sleep(Math.max(0, next - Date.now()))
    }
  }

  /** One campaign to the promo audience: the draft, then the queue, each retried under its own key. */
  async campaign(n: number) {
    const draft = await create(this.api, this.campaigns, {
      path: "/api/v1/campaigns",
      route: "POST /api/v1/campaigns",
      auth: this.shop.key,
      key: `campaign-${n}`,
      body: {
        name: `Soak promo ${n}`,
        audience: { tags: [PROMO_TAG] },
        template: {
          name: "soak_promo",
          language: "en_US",
          components: [{ type: "body", parameters: [{ type: "text", text: "{{lead.name}}" }] }]
        }
      },
      giveUpAt: this.giveUpAt()
    })
    if (draft.status !== 201) {
      this.unexpected.push(`POST /api/v1/campaigns ${draft.status} ${JSON.stringify(draft.body)}`)
      return
    }
    this.campaignIds.push(draft.body.id)
    for (let tries = 0; tries < 300; tries++) {
      const reply = await this.api.request("POST", `/api/v1/campaigns/${draft.body.id}/queue`, {
        auth: this.shop.key,
        headers: { "idempotency-key": `queue-${n}` },
        route: "POST /api/v1/campaigns/{id}/queue"
      })
      if (reply.status === 200) return
      const again =
        reply.status === DROPPED ||
        reply.status === HUNG ||
        reply.status >= 500 ||
        reply.body?.code === "idempotency_in_progress"
      if (!again) {
        this.unexpected.push(`POST /api/v1/campaigns/{id}/queue ${reply.status} ${JSON.stringify(reply.body)}`)
        return
      }
      await sleep(200)
    }
  }
}
