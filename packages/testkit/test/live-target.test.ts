import { describe, expect, it } from "vitest"
import * as LiveTarget from "../src/LiveTarget.ts"

describe("LiveTarget.fromEnv", () => {
  it("reads LEADLINE_URL and the admin token, without a trailing slash", () => {
    expect(LiveTarget.fromEnv({ LEADLINE_URL: "http://127.0.0.1:3000/", LEADLINE_ADMIN_TOKEN: "lla_x" })).toEqual({
      baseUrl: "http://127.0.0.1:3000",
      adminToken: "lla_x",
      whatsappAppSecret: undefined,
      whatsappVerifyToken: undefined
    })
  })

  it("reads the WhatsApp app secret and verify token under the names the server reads", () => {
    const target = LiveTarget.fromEnv({
      LEADLINE_URL: "http://h:1",
      LEADLINE_ADMIN_TOKEN: "t",
      WHATSAPP_APP_SECRET: "s3cret",
      WHATSAPP_VERIFY_TOKEN: "v3rify"
    })
    expect([target.whatsappAppSecret, target.whatsappVerifyToken]).toEqual(["s3cret", "v3rify"])
  })

  it("still reads LEADLINE_CONTRACT_URL, the earlier name", () => {
    expect(LiveTarget.fromEnv({ LEADLINE_CONTRACT_URL: "http://h:1", LEADLINE_ADMIN_TOKEN: "t" }).baseUrl).toBe(
      "http://h:1"
    )
  })

  it("names every setting that is missing", () => {
    expect(() => LiveTarget.fromEnv({})).toThrow(
      "Set LEADLINE_URL (the server's base URL) and LEADLINE_ADMIN_TOKEN (its operator token) to test a running Leadline"
    )
    expect(() => LiveTarget.fromEnv({ LEADLINE_URL: "http://h:1" })).toThrow(
      "Set LEADLINE_ADMIN_TOKEN (its operator token) to test a running Leadline"
    )
  })
})
