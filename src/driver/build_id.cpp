// src/driver/build_id.cpp — the build ID of the binary holding the compiler (build_id.h), read from
// the loaded image's PT_NOTE segments with dl_iterate_phdr.
#include "driver/build_id.h"

#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>

namespace sg::driver {

namespace {

struct Search {
    uintptr_t address = 0;  // an address inside the binary we want
    std::string id;
};

/// The NT_GNU_BUILD_ID note of one PT_NOTE segment, as hex ("" when it has none).
std::string build_id_note(const char* begin, size_t size) {
    size_t at = 0;
    auto align4 = [](size_t n) { return (n + 3) & ~size_t(3); };
    while (at + sizeof(ElfW(Nhdr)) <= size) {
        ElfW(Nhdr) header;
        std::memcpy(&header, begin + at, sizeof(header));
        const size_t name_at = at + sizeof(header);
        const size_t desc_at = name_at + align4(header.n_namesz);
        const size_t next = desc_at + align4(header.n_descsz);
        if (next > size) break;
        if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 && std::memcmp(begin + name_at, "GNU", 4) == 0) {
            static const char digits[] = "0123456789abcdef";
            std::string hex;
            for (size_t k = 0; k < header.n_descsz; ++k) {
                const auto byte = static_cast<unsigned char>(begin[desc_at + k]);
                hex += digits[byte >> 4];
                hex += digits[byte & 15];
            }
            return hex;
        }
        at = next;
    }
    return "";
}

int visit(struct dl_phdr_info* info, size_t, void* data) {
    auto* search = static_cast<Search*>(data);
    bool ours = false;
    for (int k = 0; k < info->dlpi_phnum && !ours; ++k) {
        const ElfW(Phdr)& p = info->dlpi_phdr[k];
        const uintptr_t start = info->dlpi_addr + p.p_vaddr;
        ours = p.p_type == PT_LOAD && search->address >= start && search->address < start + p.p_memsz;
    }
    if (!ours) return 0;
    for (int k = 0; k < info->dlpi_phnum && search->id.empty(); ++k) {
        const ElfW(Phdr)& p = info->dlpi_phdr[k];
        if (p.p_type == PT_NOTE)
            search->id = build_id_note(reinterpret_cast<const char*>(info->dlpi_addr + p.p_vaddr), p.p_memsz);
    }
    return 1;  // found our binary: stop
}

std::string find_build_id() {
    Search search;
    search.address = reinterpret_cast<uintptr_t>(&find_build_id);
    dl_iterate_phdr(&visit, &search);
    if (!search.id.empty()) return "build-id " + search.id;
    // No note (a linker without --build-id): the file the code was loaded from.
    Dl_info info{};
    struct stat file {};
    if (::dladdr(reinterpret_cast<void*>(&find_build_id), &info) && info.dli_fname &&
        ::stat(info.dli_fname, &file) == 0)
        return std::string("file ") + info.dli_fname + " " + std::to_string(file.st_size) + " " +
               std::to_string(file.st_mtim.tv_sec) + "." + std::to_string(file.st_mtim.tv_nsec);
    return "unknown build " __DATE__ " " __TIME__;
}

}  // namespace

const std::string& compiler_build_id() {
    static const std::string id = find_build_id();
    return id;
}

}  // namespace sg::driver
