/*
 * nubo_units.h: sizes, rates and durations read as every nubo tool reads them (docs/units.md).
 * Included by nubo.h; the conventions are nubo.h's.
 *
 * Sizes: K, M, G, T, P (and Ki.., KiB..) are powers of 1024, KB, MB, GB, TB, PB powers of 1000:
 * "4M" = 4194304, "4MB" = 4000000; a bare number is bytes. Durations: "90" (seconds), "90s",
 * "500ms", "10m", "6h", "1d", "1w", "1h30m". Empty text, NaN, infinities, negative numbers,
 * unknown units and values out of range are NUBO_ERR_INVALID_ARGUMENT, and the message
 * (nubo_last_error_message) names `what` (a flag or field name; NULL: "value") and the text.
 */
#ifndef NUBO_UNITS_H
#define NUBO_UNITS_H

#include "nubo.h"

#ifdef __cplusplus
extern "C" {
#endif

NUBO_C_API nubo_status nubo_units_parse_bytes(const char* text, const char* what, uint64_t* bytes);
/* Bytes per second: a size, optionally followed by "/s". */
NUBO_C_API nubo_status nubo_units_parse_rate(const char* text, const char* what,
                                             double* bytes_per_second);
NUBO_C_API nubo_status nubo_units_parse_duration(const char* text, const char* what,
                                                 double* seconds);
/* A count as model sizes and token counts are written: "7B", "70M", "1.5T", "2e9". */
NUBO_C_API nubo_status nubo_units_parse_count(const char* text, const char* what, double* count);
/* For people ("80.0 GiB", "45 min"), NUL-terminated, with the needed-size protocol of
   nubo_device_report_json. */
NUBO_C_API nubo_status nubo_units_format_bytes(double bytes, int decimals, char* buf,
                                               size_t capacity, size_t* needed);
NUBO_C_API nubo_status nubo_units_format_duration(double seconds, char* buf, size_t capacity,
                                                  size_t* needed);
/* An element type as users of this field spell it, in any case: f32 (fp32, float32), f16
   (fp16, float16, half), bf16 (bfloat16), i32 (int32), i64 (int64), tf32. */
NUBO_C_API nubo_status nubo_units_parse_dtype(const char* text, nubo_dtype* out);
/* "f32", "f16", "bf16", "i32", "i64", "tf32"; "unknown" for a value outside the enum. Static,
   never NULL. */
NUBO_C_API const char* nubo_units_dtype_name(nubo_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_UNITS_H */
