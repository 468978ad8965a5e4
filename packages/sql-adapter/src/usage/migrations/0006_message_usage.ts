import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * Messages counted per account and UTC month, over 64 stripes. Each stripe holds what it
 * has counted (`used`) and a share of what is left under the limit (`allowance`): a send
 * takes one from its own stripe's allowance, so sends far from the limit do not wait on one
 * row, and the sum of `used` never passes the limit (docs/performance.md, "Per-account counters").
 *
 * `leadline_reserve_messages` is the whole reservation in one round trip. Its fast path runs
 * in a subtransaction (the EXCEPTION block): an UPDATE that waited for a stripe and then found
 * it wanting keeps that row locked, and rolling the subtransaction back lets it go before the
 * slow path waits for its turn, whose holder may be waiting for that very row.
 */
export const migration = Migration.make(
  "0006_message_usage",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE message_usage (
      account_id uuid NOT NULL REFERENCES accounts (id),
      period text NOT NULL,
      stripe smallint NOT NULL,
      used integer NOT NULL,
      allowance integer NOT NULL,
      balanced_for integer NOT NULL,
      PRIMARY KEY (account_id, period, stripe)
    )`
    yield* sql.unsafe(`CREATE FUNCTION leadline_reserve_messages(p_account uuid, p_period text, p_n integer, p_limit integer)
      RETURNS boolean LANGUAGE plpgsql AS $$
      DECLARE
        v_stripe smallint := (pg_backend_pid() % 64)::smallint;
        v_used integer;
        v_left integer;
        v_fits boolean;
      BEGIN
        BEGIN
          UPDATE message_usage SET used = used + p_n, allowance = allowance - p_n
          WHERE account_id = p_account AND period = p_period AND stripe = v_stripe
            AND allowance >= p_n AND balanced_for = p_limit;
          IF FOUND THEN
            RETURN true;
          END IF;
          RAISE EXCEPTION USING ERRCODE = 'LL001';
        EXCEPTION WHEN SQLSTATE 'LL001' THEN
          NULL;
        END;
        -- The slow path: one at a time per account and month, every stripe locked, counted exactly,
        -- and what is left shared out again for this limit.
        PERFORM pg_advisory_xact_lock(hashtextextended(p_account::text || p_period, 0));
        INSERT INTO message_usage (account_id, period, stripe, used, allowance, balanced_for)
        SELECT p_account, p_period, s, 0, 0, -1 FROM generate_series(0, 63) AS s
        ON CONFLICT DO NOTHING;
        SELECT coalesce(sum(used), 0) INTO v_used FROM (
          SELECT used FROM message_usage WHERE account_id = p_account AND period = p_period
          ORDER BY stripe FOR UPDATE) AS locked;
        v_fits := v_used + p_n <= p_limit;
        v_left := greatest(0, p_limit - v_used - CASE WHEN v_fits THEN p_n ELSE 0 END);
        UPDATE message_usage SET
          allowance = v_left / 64 + CASE WHEN stripe < v_left % 64 THEN 1 ELSE 0 END,
          balanced_for = p_limit,
          used = used + CASE WHEN v_fits AND stripe = v_stripe THEN p_n ELSE 0 END
        WHERE account_id = p_account AND period = p_period;
        RETURN v_fits;
      END
      $$`)
  })
)
