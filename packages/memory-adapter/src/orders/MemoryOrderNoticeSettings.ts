import { Layer } from "effect"
import { type OrderNoticeSettings, OrderNoticeSettingsRepo } from "@leadline/core/orders/OrderNotices"
import * as MemorySettings from "../MemorySettings.ts"

/** Each account's order-notice settings, one row per account that set them. */
export const layer = Layer.sync(OrderNoticeSettingsRepo)(() =>
  OrderNoticeSettingsRepo.of(MemorySettings.perAccount<OrderNoticeSettings>())
)
