import { contractSuite } from "../../src/ContractSuite.ts"

const baseUrl = process.env.LEADLINE_CONTRACT_URL
const adminToken = process.env.LEADLINE_ADMIN_TOKEN
if (baseUrl === undefined || adminToken === undefined) {
  throw new Error("Set LEADLINE_CONTRACT_URL and LEADLINE_ADMIN_TOKEN to run the contract suite against a deployment")
}

contractSuite(`contract against ${baseUrl}`, () => ({ baseUrl: baseUrl.replace(/\/$/, ""), adminToken }))
