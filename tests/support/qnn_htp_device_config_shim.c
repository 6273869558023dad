// Test scaffolding only, never part of genai: a stand-in libQnnHtp.so that lets ExecuTorch's
// QnnBackend (the PyPI executorch 1.5.1 wheel) open QNN 2.51's HTP library, so the tests in
// tests/executorch can run our programs in ExecuTorch's own runtime.
//
// Why: the wheel was built against older QNN headers. On x86 it always hands deviceCreate an HTP
// custom device config {option = SOC, socModel} whose union starts at byte 4; QNN 2.51's union is
// 8-byte aligned, so it reads socModel at byte 8, finds 0 and fails (error 14001, "unknown custom
// config socModel 0"). Dropping the config does not help (context creation then fails), moving
// the 4-byte payload to byte 8 does.
//
// How: built as tests/qnn_htp_shim/libQnnHtp.so and put first on LD_LIBRARY_PATH, so ExecuTorch's
// dlopen("libQnnHtp.so") finds it. QnnInterface_getProviders loads the real library by absolute
// path, copies its provider structs and replaces one entry of each copy's function table,
// deviceCreate, with a wrapper that rewrites the custom configs into 2.51's layout. Every other
// entry is the real library's own function, untouched. The real library is:
//   - $GENAI_REAL_QNN_HTP (an absolute path), when set, else
//   - the first libQnnHtp.so in a LD_LIBRARY_PATH folder that is not this file (the test puts
//     onnxruntime_qnn's package folder after this one).
//
// Layout assumptions (QNN API 2.x, observed on 2.51; no QNN header is available here):
//   QnnInterface_t: uint32 backendId @0, const char* providerName @8, API versions (6 x uint32)
//   @16, function table @40 (8-byte pointers); table entry 40 is deviceCreate
//   (logHandle, const QnnDevice_Config_t** configs (NULL-terminated), deviceHandle*).
//   QnnDevice_Config_t: uint32 option @0, void* payload @8; option 0 = custom (payload: the HTP
//   custom config), other options are passed on unchanged.
//   HTP custom config: uint32 option @0; union @4 in the caller's layout, @8 in 2.51's (16 bytes).
// getProviders refuses (returns an error, prints why on stderr) a provider that is not the HTP's
// (backend id 6), whose core API major version is not 2, or whose table entry 40 is not a
// function of the real library; the wrapper refuses a custom option other than SOC (0), whose
// payload size this file does not know. GENAI_QNN_SHIM_VERBOSE=1 logs every rewrite.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHIM "[qnn_htp_device_config_shim] "

enum {
  kHtpBackendId = 6,
  kCoreApiMajor = 2,
  kTableOffset = 40,
  kDeviceCreateSlot = 40,
  kMaxSlots = 256,
  kMaxProviders = 8,
  kMaxConfigs = 32,
  kDeviceConfigCustom = 0,
  kHtpCustomSoc = 0,
  kError = 1000,  // QNN_COMMON_ERROR_GENERAL
};

typedef uint64_t (*DeviceCreateFn)(void* log, const void* const* configs, void** device);
typedef uint64_t (*GetProvidersFn)(const void*** providers, uint32_t* count);

static DeviceCreateFn real_device_create;
static unsigned char provider_copies[kMaxProviders][kTableOffset + 8 * kMaxSlots];
static const void* provider_list[kMaxProviders];

static int verbose(void) {
  const char* v = getenv("GENAI_QNN_SHIM_VERBOSE");
  return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

// deviceCreate with each HTP custom config moved from the caller's layout (union @4) to 2.51's
// (union @8). The rewritten structs live on this stack frame for the length of the call.
static uint64_t device_create(void* log, const void* const* configs, void** device) {
  struct DeviceConfig {
    uint32_t option;
    uint32_t pad;
    const void* payload;
  };
  struct DeviceConfig rewritten[kMaxConfigs];
  uint32_t custom[kMaxConfigs][4];
  const void* list[kMaxConfigs + 1];
  size_t n = 0;
  for (; configs != NULL && configs[n] != NULL; ++n) {
    if (n == kMaxConfigs) {
      fprintf(stderr, SHIM "deviceCreate: more than %d device configs; refusing\n", kMaxConfigs);
      return kError;
    }
    memcpy(&rewritten[n], configs[n], sizeof rewritten[n]);
    list[n] = configs[n];
    if (rewritten[n].option != kDeviceConfigCustom) continue;
    const uint32_t* old = (const uint32_t*)rewritten[n].payload;
    if (old == NULL) {
      fprintf(stderr, SHIM "deviceCreate: custom device config %zu has no payload; refusing\n", n);
      return kError;
    }
    if (old[0] != kHtpCustomSoc) {
      fprintf(stderr, SHIM "deviceCreate: HTP custom config option %u is not SOC (%d); its layout is unknown here, refusing\n",
              old[0], kHtpCustomSoc);
      return kError;
    }
    custom[n][0] = old[0];
    custom[n][1] = 0;
    custom[n][2] = old[1];  // socModel: byte 4 -> byte 8
    custom[n][3] = 0;
    if (verbose()) fprintf(stderr, SHIM "deviceCreate: custom config SOC socModel %u moved from byte 4 to byte 8\n", old[1]);
    rewritten[n].payload = custom[n];
    list[n] = &rewritten[n];
  }
  list[n] = NULL;
  const uint64_t rc = real_device_create(log, configs == NULL ? NULL : list, device);
  if (verbose()) fprintf(stderr, SHIM "deviceCreate -> %llu\n", (unsigned long long)rc);
  return rc;
}

static int same_file(const char* a, const char* b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// The real libQnnHtp.so's path into `out`; 0 when none is found.
static int find_real_library(char* out, size_t size) {
  const char* explicit_path = getenv("GENAI_REAL_QNN_HTP");
  Dl_info self;
  if (!dladdr((const void*)&find_real_library, &self) || self.dli_fname == NULL) return 0;
  if (explicit_path != NULL && explicit_path[0] != '\0') {
    if (explicit_path[0] != '/' || same_file(explicit_path, self.dli_fname)) {
      fprintf(stderr, SHIM "GENAI_REAL_QNN_HTP='%s' must be an absolute path to QNN's own libQnnHtp.so\n", explicit_path);
      return 0;
    }
    snprintf(out, size, "%s", explicit_path);
    return 1;
  }
  const char* paths = getenv("LD_LIBRARY_PATH");
  while (paths != NULL && *paths != '\0') {
    const char* end = strchr(paths, ':');
    const size_t len = end ? (size_t)(end - paths) : strlen(paths);
    if (len > 0 && len + sizeof "/libQnnHtp.so" < size) {
      snprintf(out, size, "%.*s/libQnnHtp.so", (int)len, paths);
      if (out[0] == '/' && access(out, R_OK) == 0 && !same_file(out, self.dli_fname)) return 1;
    }
    paths = end ? end + 1 : NULL;
  }
  return 0;
}

// The entry `slot` of a provider's function table lies in the real library's code.
static int in_library(const void* fn, const char* library) {
  Dl_info info;
  return fn != NULL && dladdr(fn, &info) && info.dli_fname != NULL && same_file(info.dli_fname, library);
}

// ExecuTorch dlcloses libQnnHtp.so when its last QNN program goes, and dlopens it by name again
// for the next. If this library were unloaded then, that dlopen would find the real library
// (loaded here, still open, its soname libQnnHtp.so) and bypass the shim: so it stays loaded.
static int pin_self(void) {
  Dl_info self;
  return dladdr((const void*)&pin_self, &self) && self.dli_fname != NULL &&
         dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != NULL;
}

__attribute__((visibility("default"))) uint64_t QnnInterface_getProviders(const void*** providers, uint32_t* count) {
  if (!pin_self()) {
    fprintf(stderr, SHIM "cannot pin this library in memory (dlopen RTLD_NODELETE: %s)\n", dlerror());
    return kError;
  }
  char path[PATH_MAX];
  if (!find_real_library(path, sizeof path)) {
    fprintf(stderr, SHIM "cannot find QNN's own libQnnHtp.so: set GENAI_REAL_QNN_HTP or put onnxruntime_qnn's "
                         "package folder on LD_LIBRARY_PATH after this library's\n");
    return kError;
  }
  void* real = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (real == NULL) {
    fprintf(stderr, SHIM "dlopen(%s) failed: %s\n", path, dlerror());
    return kError;
  }
  GetProvidersFn get = (GetProvidersFn)dlsym(real, "QnnInterface_getProviders");
  if (get == NULL) {
    fprintf(stderr, SHIM "%s has no QnnInterface_getProviders\n", path);
    return kError;
  }
  const void** real_list = NULL;
  uint32_t n = 0;
  const uint64_t rc = get(&real_list, &n);
  if (rc != 0) return rc;
  if (n == 0 || n > kMaxProviders) {
    fprintf(stderr, SHIM "%s lists %u providers (this shim handles 1..%d); refusing\n", path, n, kMaxProviders);
    return kError;
  }
  for (uint32_t p = 0; p < n; ++p) {
    const unsigned char* s = (const unsigned char*)real_list[p];
    uint32_t backend_id, api[6];
    memcpy(&backend_id, s, sizeof backend_id);
    memcpy(api, s + 16, sizeof api);
    if (backend_id != kHtpBackendId || api[0] != kCoreApiMajor) {
      fprintf(stderr, SHIM "provider %u of %s: backend id %u, core API %u.%u.%u; this shim knows only the HTP (backend id %d) "
                      "of core API %d.x, refusing\n", p, path, backend_id, api[0], api[1], api[2], kHtpBackendId, kCoreApiMajor);
      return kError;
    }
    // The table ends where its entries stop pointing into the real library.
    const void* const* table = (const void* const*)(s + kTableOffset);
    size_t slots = 0;
    while (slots < kMaxSlots && (table[slots] == NULL || in_library(table[slots], path))) ++slots;
    if (slots <= kDeviceCreateSlot || table[kDeviceCreateSlot] == NULL) {
      fprintf(stderr, SHIM "provider %u of %s: function table of %zu entries has no entry %d (deviceCreate); refusing\n", p,
              path, slots, kDeviceCreateSlot);
      return kError;
    }
    const DeviceCreateFn fn = (DeviceCreateFn)table[kDeviceCreateSlot];
    if (real_device_create != NULL && real_device_create != fn) {
      fprintf(stderr, SHIM "providers of %s disagree on deviceCreate; refusing\n", path);
      return kError;
    }
    real_device_create = fn;
    memset(provider_copies[p], 0, sizeof provider_copies[p]);
    memcpy(provider_copies[p], s, kTableOffset + 8 * slots);
    const DeviceCreateFn wrapper = device_create;
    memcpy(provider_copies[p] + kTableOffset + 8 * kDeviceCreateSlot, &wrapper, sizeof wrapper);
    provider_list[p] = provider_copies[p];
    if (verbose())
      fprintf(stderr, SHIM "provider %u of %s: '%s', core API %u.%u.%u, %zu table entries, deviceCreate wrapped\n", p, path,
              *(const char* const*)(s + 8), api[0], api[1], api[2], slots);
  }
  *providers = provider_list;
  *count = n;
  return 0;
}
