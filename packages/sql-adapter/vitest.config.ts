import { defineConfig } from "vitest/config"
import { config } from "../../vitest.shared.ts"

export default defineConfig(config())
