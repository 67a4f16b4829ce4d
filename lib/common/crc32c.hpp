// CRC-32C (Castagnoli), as S3's x-amz-checksum-crc32c and iSCSI define it: SSE4.2's crc32
// instruction where the CPU has it, eight tables a byte elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nubo::crc32c {

// The CRC of `size` bytes at `data`, continuing from `crc` (0 to start): crc32c of
// "123456789" is 0xe3069283.
std::uint32_t extend(std::uint32_t crc, const void* data, std::size_t size);
// The same from tables alone: what CPUs without SSE4.2 run (and tests compare with extend).
std::uint32_t extend_portable(std::uint32_t crc, const void* data, std::size_t size);

}  // namespace nubo::crc32c
