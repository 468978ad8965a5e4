import { Context, Logger, Tracer } from "effect"

export const LOG_FORMATS = ["pretty", "json", "logfmt"] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

/**
 * One JSON object per line, for log shippers: `time`, `level`, `message`, the annotations
 * (`request_id` on a failed request's line), the cause when there is one, and the current span's
 * `trace_id` and `span_id` when tracing is on, so a line finds its trace.
 */
export const formatJson = Logger.make((options): string => {
  const { timestamp, level, message, cause, annotations } = Logger.formatStructured.log(options)
  const span = Context.getOrUndefined(options.fiber.context, Tracer.ParentSpan)
  return JSON.stringify({
    time: timestamp,
    level,
    message,
    ...annotations,
    ...(cause === undefined ? {} : { cause }),
    ...(span === undefined ? {} : { trace_id: span.traceId, span_id: span.spanId })
  })
})

/** The loggers of a format; `pretty` keeps Effect's default (a terminal's), the others one line per entry. */
export const loggers = (format: LogFormat) =>
  format === "json"
    ? Logger.layer([Logger.withConsoleLog(formatJson), Logger.tracerLogger])
    : format === "logfmt"
      ? Logger.layer([Logger.consoleLogFmt, Logger.tracerLogger])
      : Logger.layer([Logger.defaultLogger, Logger.tracerLogger])
