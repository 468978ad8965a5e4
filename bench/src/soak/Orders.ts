import { type Api, DROPPED, HUNG, sleep } from "./Api.ts"
import { create, Ledger } from "./Idempotent.ts"
import type { Shop } from "./Shop.ts"

/**
 * Orders on the one hot product, tracked stock: idempotent creates of 1-3 units at a steady rate
 * (every tenth to both servers at once), some confirmed and some cancelled afterwards (a cancel
 * gives the units back; each move queues an order notice), and the product's stock read every
 * second, to see it never below zero.
 */
export class Orders {
  readonly ledger = new Ledger()
  readonly placed = new Map<string, number>()
  readonly cancelled = new Set<string>()
  readonly unexpected: Array<string> = []
  insufficient = 0
  lowestStock = Number.POSITIVE_INFINITY
  stockReads = 0
  private running = true
  private loops: Array<Promise<void>> = []

  private readonly api: Api
  private readonly shop: Shop
  private readonly giveUpAt: () => number

  constructor(api: Api, shop: Shop, giveUpAt: () => number) {
    this.api = api
    this.shop = shop
    this.giveUpAt = giveUpAt
  }

  start(perSecond: number) {
    this.loops = [this.orders(perSecond), this.stock()]
  }

  async stop() {
    this.running = false
    await Promise.all(this.loops)
  }

  private async orders(perSecond: number) {
    const moves: Array<Promise<void>> = []
    for (let i = 0; this.running; i++) {
      const next = Date.now() + 1000 / perSecond
      const customer = this.shop.customers[i % this.shop.customers.length]!
      const units = 1 + Math.floor(Math.random() * 3)
      const reply = await create(this.api, this.ledger, {
        path: "/api/v1/orders",
        route: "POST /api/v1/orders",
        auth: this.shop.key,
        key: `order-${i}`,
        body: { lead_id: customer.leadId, items: [{ product_id: this.shop.productId, quantity: units }] },
        twins: i % 10 === 0,
        replay: i % 13 === 5,
        giveUpAt: this.giveUpAt()
      })
      if (reply.status === 201) {
        this.placed.set(reply.body.id, units)
        const roll = Math.random()
        if (roll < 0.3) moves.push(this.move(reply.body.id, "cancelled"))
        else if (roll < 0.6) moves.push(this.move(reply.body.id, "confirmed"))
      } else if (reply.status === 409 && reply.body?.code === "insufficient_stock") this.insufficient++
      else this.unexpected.push(`POST /api/v1/orders ${reply.status} ${JSON.stringify(reply.body)}`)
      await sleep(Math.max(0, next - Date.now()))
    }
    await Promise.all(moves)
  }

  /** A status move, retried until answered (a move to the state the order is in is no move: 200). */
  private async move(id: string, status: "confirmed" | "cancelled") {
    await sleep(Math.random() * 2_000)
    for (let tries = 0; tries < 300; tries++) {
      const reply = await this.api.request("PATCH", `/api/v1/orders/${id}`, {
        auth: this.shop.key,
        json: { status },
        route: "PATCH /api/v1/orders/{id}"
      })
      if (reply.status === 200) {
        if (status === "cancelled") this.cancelled.add(id)
        return
      }
      if (reply.status !== DROPPED && reply.status !== HUNG && reply.status < 500) {
        this.unexpected.push(`PATCH /api/v1/orders/${id} ${reply.status} ${JSON.stringify(reply.body)}`)
        return
      }
      await sleep(200)
    }
  }

  private async stock() {
    while (this.running) {
      const reply = await this.api.request("GET", `/api/v1/catalogue/products/${this.shop.productId}`, {
        auth: this.shop.key,
        route: "GET /api/v1/catalogue/products/{id}"
      })
      if (reply.status === 200 && typeof reply.body?.stock === "number") {
        this.stockReads++
        this.lowestStock = Math.min(this.lowestStock, reply.body.stock)
      }
      await sleep(1_000)
    }
  }
}
