import { Layer } from "effect"
import { type OptOutSettings, OptOutSettingsRepo } from "@leadline/core/optouts/OptOutSettings"
import * as MemorySettings from "../MemorySettings.ts"

/** Each account's opt-out keywords and confirmations, one row per account that set them. */
export const layer = Layer.sync(OptOutSettingsRepo)(() =>
  OptOutSettingsRepo.of(MemorySettings.perAccount<OptOutSettings>())
)
