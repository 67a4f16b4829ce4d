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
/* For people ("80.0 GiB", "45 min"), NUL-terminated, with the needed-size protocol of
   nubo_report_json. */
NUBO_C_API nubo_status nubo_units_format_bytes(double bytes, int decimals, char* buf,
                                               size_t capacity, size_t* needed);
NUBO_C_API nubo_status nubo_units_format_duration(double seconds, char* buf, size_t capacity,
                                                  size_t* needed);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_UNITS_H */
