import * as Resource from "../Resource.ts"

/** Idempotency has no routes of its own: it is a header on the creating POSTs, and a table. */
export const resource: Resource.Resource = {
  name: "idempotency keys",
  routes: [],
  isolation: {
    exempt:
      "no route addresses a stored key; that one account's key is not another's is checked by IdempotencySecurity (API1) and IdempotencyContract"
  },
  ledger: {
    tables: [
      {
        name: "idempotency_keys",
        account: "account_id",
        rows: Resource.uncounted(
          "a row per first use of a valid Idempotency-Key on a creating POST, whatever the answer (a stored 4xx too): the answers do not show the request's key"
        )
      }
    ]
  }
}
