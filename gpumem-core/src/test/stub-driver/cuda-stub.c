/*
 * A stub libcuda.so.1: every driver entry point gpumem reaches, as the C ABI delivers each call's arguments.
 *
 * It records every call (one line each: the exported symbol, the result, the arguments, and the structs decoded
 * field by field through cuda.h's own definitions) and answers as a healthy driver does: devices whose memory is
 * host memory, addresses and handles it hands out and checks when they come back, and CUDA's rules where gpumem
 * could break them (a context current for memory work, whole granules for virtual memory, access set before a
 * mapping is touched, zero in every reserved byte, sticky errors after a fault). A refused call answers the code
 * a driver answers and changes nothing.
 *
 * Built by build.sh with the machine's cc against the toolkit's cuda.h; loaded instead of the driver through
 * LD_LIBRARY_PATH, so that JCuda's real natives and JNA call it. Its own functions (gpumemStub*) let a test read
 * the records, inject refusals and ask what is still held. Environment, read once at cuInit:
 *   GPUMEM_STUB_DEVICES           devices (default 2)
 *   GPUMEM_STUB_DEVICE_BYTES      memory per device (default 1 GiB)
 *   GPUMEM_STUB_FAULTING_KERNEL   an entry point whose launch faults with CUDA_ERROR_ILLEGAL_ADDRESS, sticky
 *   GPUMEM_STUB_KERNEL_MICROS     how long each kernel launch and host-device or device-device async copy takes,
 *                                 after its stream's earlier work; every context's default streams share one time
 * Built with -DGPUMEM_STUB_NO_VIRTUAL_MEMORY it lacks the entry points of physical memory, as an old driver would.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define STUB_EXPORT __attribute__((visibility("default")))
#define MAX_DEVICES 8
#define GRANULARITY ((size_t) 2 << 20)
#define MAX_PARAMS 64
#define DRIVER_VERSION 13000

/* ---- what the stub holds ---- */

enum kind { DEVICE = 1, MANAGED, PINNED, POOLED, RESERVED };

static const char *kindName(int kind) {
	switch (kind) {
	case DEVICE: return "device";
	case MANAGED: return "managed";
	case PINNED: return "pinned";
	case POOLED: return "pooled";
	case RESERVED: return "reserved";
	default: return "none";
	}
}

struct region {
	uintptr_t base;
	size_t size;
	size_t mappedSize;
	int kind;
	int device;
	void *pool;
	struct region *next;
};

struct physical {
	unsigned long long handle;
	int fd;
	size_t size;
	int device;
	int mappings;
	int released;
	struct physical *next;
};

struct mapping {
	uintptr_t address;
	size_t size;
	struct physical *memory;
	CUmemAccess_flags access[MAX_DEVICES];
	struct mapping *next;
};

struct CUctx_st {
	int device;
	int retained;
	int peers[MAX_DEVICES];
};

/* The head of every handle the stub hands out: the list that holds it, and the device whose context made it. */
struct handle {
	struct handle *next;
	int device;
};

struct CUstream_st {
	struct handle head;
	long long busyUntil; /* when the work enqueued so far completes, on CLOCK_MONOTONIC, in ns */
};

struct CUevent_st {
	struct handle head;
	int unasked;
	long long at; /* when the work before the record completes */
};

struct CUfunc_st {
	char name[128];
	int params;
	size_t sizes[MAX_PARAMS];
};

struct CUmod_st {
	struct handle head;
	int functions;
	struct CUfunc_st function[64];
};

struct CUmemPoolHandle_st {
	struct handle head;
	int allocations;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static int deviceCount = 2;
static size_t deviceBytes = (size_t) 1 << 30;
static size_t used[MAX_DEVICES];
static struct CUctx_st contexts[MAX_DEVICES];
static __thread struct CUctx_st *current;
static CUresult sticky;
static char faultingKernel[128];

/* How long each kernel and asynchronous copy takes (GPUMEM_STUB_KERNEL_MICROS), and when the default streams' work
 * completes. */
static long long workNanos;
static long long defaultBusyUntil;
static int driverVersion = DRIVER_VERSION;
static int attributeOverride[256];
static int attributeOverridden[256];

static struct region *regions;
static struct physical *physicals;
static struct mapping *mappings;
static struct handle *streams;
static struct handle *events;
static struct handle *modules;
static struct handle *pools;

struct refusal {
	char call[64];
	CUresult code;
	struct refusal *next;
};
static struct refusal *refusals;

/* Allocations of each kind, and handles, a primary context took with it when its last retain was released. */
static int freedWithContext[RESERVED + 1];
static int handlesFreedWithContext;

/* ---- the record ---- */

static char *records;
static size_t recordsLength, recordsCapacity;
static char line[65536];
static size_t lineLength;

/* The entry point being called, as cuda.h's API names it: its symbol without a version suffix such as _v2. */
static char call[64];

/* Room kept at the end of a line for its result, however long its arguments. */
#define RESULT_ROOM 32

static void add(const char *format, ...) __attribute__((format(printf, 1, 2)));

static void add(const char *format, ...) {
	va_list args;
	va_start(args, format);
	size_t room = sizeof(line) - RESULT_ROOM - lineLength;
	int n = vsnprintf(line + lineLength, room, format, args);
	va_end(args);
	if (n > 0) {
		lineLength += ((size_t) n < room) ? (size_t) n : room - 1;
	}
}

static void addHex(const char *key, const void *bytes, size_t size) {
	add(" %s=", key);
	for (size_t i = 0; i < size; i++) {
		add("%02x", ((const unsigned char *) bytes)[i]);
	}
}

static void begin(const char *symbol) {
	lineLength = 0;
	add("%s", symbol);
	snprintf(call, sizeof(call), "%s", symbol);
	char *version = strstr(call, "_v");
	if (version != NULL && isdigit((unsigned char) version[2])) {
		*version = 0;
	}
}

static CUresult end(CUresult result) {
	lineLength += (size_t) snprintf(line + lineLength, sizeof(line) - lineLength, " result=%d\n", (int) result);
	if (recordsLength + lineLength + 1 > recordsCapacity) {
		size_t capacity = (recordsCapacity == 0) ? (1 << 20) : recordsCapacity * 2;
		while (capacity < recordsLength + lineLength + 1) {
			capacity *= 2;
		}
		char *grown = realloc(records, capacity);
		if (grown == NULL) {
			return result;
		}
		records = grown;
		recordsCapacity = capacity;
	}
	memcpy(records + recordsLength, line, lineLength);
	recordsLength += lineLength;
	records[recordsLength] = 0;
	return result;
}

/* Each entry point: lock, start its record line, decide, end the record and unlock. */
#define ENTER() pthread_mutex_lock(&lock); begin(__func__)
#define RETURN(code) do { CUresult r_ = end(code); pthread_mutex_unlock(&lock); return r_; } while (0)

/* ---- rules shared by the entry points ---- */

/* Zeroed memory for the stub's own books; a stub out of host memory cannot go on answering truthfully. */
static void *zeroed(size_t size) {
	void *memory = calloc(1, size);
	if (memory == NULL) {
		abort();
	}
	return memory;
}

static void configure(void) {
	const char *devices = getenv("GPUMEM_STUB_DEVICES");
	if (devices != NULL && atoi(devices) >= 0 && atoi(devices) <= MAX_DEVICES) {
		deviceCount = atoi(devices);
	}
	const char *bytes = getenv("GPUMEM_STUB_DEVICE_BYTES");
	if (bytes != NULL && strtoull(bytes, NULL, 10) > 0) {
		deviceBytes = (size_t) strtoull(bytes, NULL, 10);
	}
	const char *micros = getenv("GPUMEM_STUB_KERNEL_MICROS");
	if (micros != NULL && atoll(micros) > 0) {
		workNanos = atoll(micros) * 1000LL;
	}
	const char *kernel = getenv("GPUMEM_STUB_FAULTING_KERNEL");
	if (kernel != NULL) {
		snprintf(faultingKernel, sizeof(faultingKernel), "%s", kernel);
	}
	for (int i = 0; i < MAX_DEVICES; i++) {
		contexts[i].device = i;
	}
}

/* The refusal a test injected for the entry point being called, CUDA_SUCCESS where none. */
static CUresult refused(void) {
	for (struct refusal *r = refusals; r != NULL; r = r->next) {
		if (strcmp(r->call, call) == 0) {
			return r->code;
		}
	}
	return CUDA_SUCCESS;
}

/* What every call but cuInit and cuDriverGetVersion must pass: cuInit first, and no refusal injected. */
static CUresult ready(void) {
	return initialized ? refused() : CUDA_ERROR_NOT_INITIALIZED;
}

/*
 * What work in a context must pass besides: a context current on this thread, alive, and not failed for good (after
 * a fault every call in the context answers the fault, as CUDA's do).
 */
static CUresult inContext(void) {
	CUresult result = ready();
	if (result != CUDA_SUCCESS) {
		return result;
	}
	if (current == NULL) {
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	if (current->retained == 0) {
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	}
	return sticky;
}

static int validDevice(int device) {
	return device >= 0 && device < deviceCount;
}

static struct region *regionAt(uintptr_t address) {
	for (struct region *r = regions; r != NULL; r = r->next) {
		if (address >= r->base && address < r->base + r->size) {
			return r;
		}
	}
	return NULL;
}

static struct region *regionStarting(uintptr_t address, int kind) {
	for (struct region *r = regions; r != NULL; r = r->next) {
		if (r->base == address && r->kind == kind) {
			return r;
		}
	}
	return NULL;
}

static struct mapping *mappingAt(uintptr_t address) {
	for (struct mapping *m = mappings; m != NULL; m = m->next) {
		if (address >= m->address && address < m->address + m->size) {
			return m;
		}
	}
	return NULL;
}

/*
 * Whether [address, address + bytes) is memory device accessor may read and write: within one allocation of device,
 * managed or pooled memory, or within mappings of one reserved range, side by side, each opened to it.
 */
static int deviceMemory(uintptr_t address, size_t bytes, int accessor, int *device) {
	struct region *r = regionAt(address);
	if (r == NULL || bytes == 0 || bytes > r->base + r->size - address) {
		return 0;
	}
	if (device != NULL) {
		*device = r->device;
	}
	if (r->kind == DEVICE || r->kind == MANAGED || r->kind == POOLED) {
		return 1;
	}
	if (r->kind != RESERVED) {
		return 0;
	}
	for (uintptr_t at = address; at < address + bytes;) {
		struct mapping *m = mappingAt(at);
		if (m == NULL || m->access[accessor] != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
			return 0;
		}
		at = m->address + m->size;
	}
	return 1;
}

static const char *describeAddress(uintptr_t address) {
	struct region *r = regionAt(address);
	return (r == NULL) ? "none" : kindName(r->kind);
}

/* A handle of size bytes, made in the current context, on list. */
static void *listed(struct handle **list, size_t size) {
	struct handle *h = zeroed(size);
	h->device = current->device;
	h->next = *list;
	*list = h;
	return h;
}

static int holds(struct handle *list, const void *h) {
	for (; list != NULL; list = list->next) {
		if (list == h) {
			return 1;
		}
	}
	return 0;
}

/* Whether h is on list and was made in the context current on this thread. */
static int ours(struct handle *list, const void *h) {
	return holds(list, h) && ((const struct handle *) h)->device == current->device;
}

/*
 * Takes h off list; 0 where list does not hold it. The memory is kept, never reused, so that a destroyed handle
 * coming back is refused rather than taken for a new one at the same address.
 */
static int drop(struct handle **list, const void *h) {
	for (struct handle **at = list; *at != NULL; at = &(*at)->next) {
		if (*at == h) {
			*at = (*at)->next;
			return 1;
		}
	}
	return 0;
}

/* Takes off list the handles made in device's context; answers how many. */
static int dropMadeOn(struct handle **list, int device) {
	int dropped = 0;
	for (struct handle **at = list; *at != NULL;) {
		struct handle *h = *at;
		if (h->device == device) {
			*at = h->next;
			dropped++;
		}
		else {
			at = &h->next;
		}
	}
	return dropped;
}

static int count(struct handle *list) {
	int n = 0;
	for (; list != NULL; list = list->next) {
		n++;
	}
	return n;
}

/* A default stream, or a stream of the current context. */
static int validStream(CUstream stream) {
	return stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD || ours(streams, stream);
}

static long long monotonicNanos(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* When the work of a valid stream completes: the default streams share one time. */
static long long *busyUntil(CUstream stream) {
	return (stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) ? &defaultBusyUntil
			: &stream->busyUntil;
}

/*
 * A kernel or a copy on a valid stream takes GPUMEM_STUB_KERNEL_MICROS (none by default) after the work enqueued on
 * that stream before it; streams overlap, as independent streams may on a GPU. The work itself ran when enqueued.
 */
static void occupy(CUstream stream) {
	if (workNanos > 0) {
		long long *busy = busyUntil(stream);
		long long now = monotonicNanos();
		*busy = ((*busy > now) ? *busy : now) + workNanos;
	}
}

/* Sleeps until a time of CLOCK_MONOTONIC: called with the lock released, as a driver's wait lets other calls in. */
static void sleepUntil(long long until) {
	struct timespec t = { .tv_sec = until / 1000000000LL, .tv_nsec = until % 1000000000LL };
	while (until > 0 && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
	}
}

/* A function of a module loaded in the current context. */
static struct CUfunc_st *validFunction(CUfunction function) {
	for (struct handle *h = modules; h != NULL; h = h->next) {
		struct CUmod_st *m = (struct CUmod_st *) h;
		if (h->device == current->device && function >= &m->function[0] && function < &m->function[m->functions]) {
			return function;
		}
	}
	return NULL;
}

static void *mapAnonymous(size_t bytes) {
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return (p == MAP_FAILED) ? NULL : p;
}

static size_t pages(size_t bytes) {
	size_t page = (size_t) sysconf(_SC_PAGESIZE);
	return (bytes + page - 1) / page * page;
}

static CUresult allocate(CUdeviceptr *pointer, size_t bytes, int kind, int device, void *pool) {
	if (pointer == NULL || bytes == 0) {
		return CUDA_ERROR_INVALID_VALUE;
	}
	int counted = (kind == DEVICE || kind == POOLED);
	if (counted && bytes > deviceBytes - used[device]) {
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	void *memory = mapAnonymous(pages(bytes));
	if (memory == NULL) {
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	struct region *r = zeroed(sizeof(*r));
	r->base = (uintptr_t) memory;
	r->size = bytes;
	r->mappedSize = pages(bytes);
	r->kind = kind;
	r->device = device;
	r->pool = pool;
	r->next = regions;
	regions = r;
	if (counted) {
		used[device] += bytes;
	}
	*pointer = (CUdeviceptr) r->base;
	return CUDA_SUCCESS;
}

static void forget(struct region *gone) {
	for (struct region **r = &regions; *r != NULL; r = &(*r)->next) {
		if (*r == gone) {
			*r = gone->next;
			break;
		}
	}
	if (gone->kind == DEVICE || gone->kind == POOLED) {
		used[gone->device] -= gone->size;
	}
	munmap((void *) gone->base, gone->mappedSize);
	free(gone);
}

static void dropPhysical(struct physical *gone) {
	for (struct physical **p = &physicals; *p != NULL; p = &(*p)->next) {
		if (*p == gone) {
			*p = gone->next;
			break;
		}
	}
	used[gone->device] -= gone->size;
	close(gone->fd);
	free(gone);
}

/*
 * What CUDA does when a primary context's last retain is released: the context is destroyed with the memory,
 * streams, events, modules and pools made in it. Reserved ranges and physical memory are the process's and stay.
 */
static void destroyContext(int device) {
	for (struct region *r = regions, *next; r != NULL; r = next) {
		next = r->next;
		if (r->device == device && r->kind != RESERVED) {
			freedWithContext[r->kind]++;
			forget(r);
		}
	}
	handlesFreedWithContext += dropMadeOn(&streams, device) + dropMadeOn(&events, device)
			+ dropMadeOn(&modules, device) + dropMadeOn(&pools, device);
	memset(contexts[device].peers, 0, sizeof(contexts[device].peers));
	for (int i = 0; i < MAX_DEVICES; i++) {
		contexts[i].peers[device] = 0;
	}
}

/* ---- discovery and contexts ---- */

STUB_EXPORT CUresult CUDAAPI cuInit(unsigned int flags) {
	ENTER();
	add(" flags=%u", flags);
	if (flags != 0) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	if (!initialized) {
		configure();
		initialized = 1;
	}
	RETURN(refused());
}

STUB_EXPORT CUresult CUDAAPI cuDriverGetVersion(int *version) {
	ENTER();
	if (version == NULL) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	*version = driverVersion;
	add(" version=%d", driverVersion);
	RETURN(CUDA_SUCCESS);
}

STUB_EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count) {
	ENTER();
	CUresult result = ready();
	if (result == CUDA_SUCCESS && count == NULL) {
		result = CUDA_ERROR_INVALID_VALUE;
	}
	if (result == CUDA_SUCCESS) {
		*count = deviceCount;
		add(" count=%d", deviceCount);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
	ENTER();
	add(" ordinal=%d", ordinal);
	CUresult result = ready();
	if (result == CUDA_SUCCESS) {
		if (!validDevice(ordinal)) {
			RETURN(CUDA_ERROR_INVALID_DEVICE);
		}
		if (device == NULL) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
		*device = ordinal;
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuDeviceGetPCIBusId(char *busId, int length, CUdevice device) {
	ENTER();
	add(" length=%d device=%d", length, device);
	CUresult result = ready();
	if (result == CUDA_SUCCESS) {
		if (!validDevice(device)) {
			RETURN(CUDA_ERROR_INVALID_DEVICE);
		}
		if (busId == NULL || length <= 0) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
		snprintf(busId, (size_t) length, "0000:%02x:00.0", device + 1);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int length, CUdevice device) {
	ENTER();
	add(" length=%d device=%d", length, device);
	CUresult result = ready();
	if (result == CUDA_SUCCESS) {
		if (!validDevice(device)) {
			RETURN(CUDA_ERROR_INVALID_DEVICE);
		}
		if (name == NULL || length <= 0) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
		snprintf(name, (size_t) length, "gpumem stub device %d", device);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device) {
	ENTER();
	add(" attribute=%d device=%d", (int) attribute, device);
	CUresult result = ready();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (!validDevice(device)) {
		RETURN(CUDA_ERROR_INVALID_DEVICE);
	}
	if (value == NULL || attribute <= 0 || attribute >= CU_DEVICE_ATTRIBUTE_MAX) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	switch (attribute) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *value = 1; break;
	default: *value = 0; break;
	}
	if ((int) attribute < 256 && attributeOverridden[attribute]) {
		*value = attributeOverride[attribute];
	}
	add(" value=%d", *value);
	RETURN(CUDA_SUCCESS);
}

STUB_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
	ENTER();
	add(" device=%d", device);
	CUresult result = ready();
	if (result == CUDA_SUCCESS) {
		if (!validDevice(device)) {
			RETURN(CUDA_ERROR_INVALID_DEVICE);
		}
		if (context == NULL) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
		contexts[device].retained++;
		*context = &contexts[device];
		add(" context=%p retained=%d", (void *) *context, contexts[device].retained);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice device) {
	ENTER();
	add(" device=%d", device);
	CUresult result = ready();
	if (result == CUDA_SUCCESS) {
		if (!validDevice(device)) {
			RETURN(CUDA_ERROR_INVALID_DEVICE);
		}
		if (contexts[device].retained == 0) {
			RETURN(CUDA_ERROR_INVALID_CONTEXT);
		}
		if (--contexts[device].retained == 0) {
			destroyContext(device);
		}
		add(" retained=%d", contexts[device].retained);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) {
	ENTER();
	add(" context=%p", (void *) context);
	CUresult result = ready();
	if (result == CUDA_SUCCESS) {
		if (context != NULL && (context < &contexts[0] || context >= &contexts[deviceCount])) {
			RETURN(CUDA_ERROR_INVALID_CONTEXT);
		}
		current = context;
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuDeviceCanAccessPeer(int *canAccess, CUdevice device, CUdevice peer) {
	ENTER();
	add(" device=%d peer=%d", device, peer);
	CUresult result = ready();
	if (result == CUDA_SUCCESS) {
		if (!validDevice(device) || !validDevice(peer)) {
			RETURN(CUDA_ERROR_INVALID_DEVICE);
		}
		if (canAccess == NULL) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
		*canAccess = (device != peer);
		add(" canAccess=%d", *canAccess);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
	ENTER();
	add(" peer=%p flags=%u", (void *) peer, flags);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (flags != 0 || peer < &contexts[0] || peer >= &contexts[deviceCount] || peer == current) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	if (current->peers[peer->device]) {
		RETURN(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
	}
	current->peers[peer->device] = 1;
	RETURN(CUDA_SUCCESS);
}

STUB_EXPORT CUresult CUDAAPI cuMemGetInfo(size_t *freeBytes, size_t *total) {
	ENTER();
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		if (freeBytes == NULL || total == NULL) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
		*freeBytes = deviceBytes - used[current->device];
		*total = deviceBytes;
		add(" device=%d free=%zu total=%zu", current->device, *freeBytes, *total);
	}
	RETURN(result);
}

/* ---- device, managed and pinned memory ---- */

STUB_EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr *pointer, size_t bytes) {
	ENTER();
	add(" bytes=%zu", bytes);
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		result = allocate(pointer, bytes, DEVICE, current->device, NULL);
	}
	if (result == CUDA_SUCCESS) {
		add(" pointer=0x%llx", (unsigned long long) *pointer);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes, unsigned int flags) {
	ENTER();
	add(" bytes=%zu flags=%u", bytes, flags);
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		result = (flags == CU_MEM_ATTACH_GLOBAL || flags == CU_MEM_ATTACH_HOST)
				? allocate(pointer, bytes, MANAGED, current->device, NULL) : CUDA_ERROR_INVALID_VALUE;
	}
	if (result == CUDA_SUCCESS) {
		add(" pointer=0x%llx", (unsigned long long) *pointer);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr pointer) {
	ENTER();
	add(" pointer=0x%llx kind=%s", (unsigned long long) pointer, describeAddress(pointer));
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		struct region *r = regionStarting(pointer, DEVICE);
		if (r == NULL) {
			r = regionStarting(pointer, MANAGED);
		}
		if (r == NULL) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
		forget(r);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuMemHostAlloc(void **pointer, size_t bytes, unsigned int flags) {
	ENTER();
	add(" bytes=%zu flags=%u", bytes, flags);
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		unsigned known = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
		CUdeviceptr address = 0;
		result = (pointer == NULL || (flags & ~known) != 0) ? CUDA_ERROR_INVALID_VALUE
				: allocate(&address, bytes, PINNED, current->device, NULL);
		if (result == CUDA_SUCCESS) {
			*pointer = (void *) (uintptr_t) address;
			add(" pointer=%p", *pointer);
		}
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuMemFreeHost(void *pointer) {
	ENTER();
	add(" pointer=%p kind=%s", pointer, describeAddress((uintptr_t) pointer));
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		struct region *r = regionStarting((uintptr_t) pointer, PINNED);
		if (r == NULL) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
		forget(r);
	}
	RETURN(result);
}

/* cuda.h of CUDA 13 declares only the _v2 of cuMemPrefetchAsync; JCuda, built for CUDA 12.0, calls the first. */
#undef cuMemPrefetchAsync
CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr pointer, size_t bytes, CUdevice device, CUstream stream);

STUB_EXPORT CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr pointer, size_t bytes, CUdevice device, CUstream stream) {
	ENTER();
	add(" pointer=0x%llx bytes=%zu device=%d stream=%p kind=%s", (unsigned long long) pointer, bytes, device,
			(void *) stream, describeAddress(pointer));
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		struct region *r = regionAt(pointer);
		if (r == NULL || r->kind != MANAGED || bytes == 0 || bytes > r->base + r->size - pointer) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
		if (device != CU_DEVICE_CPU && !validDevice(device)) {
			RETURN(CUDA_ERROR_INVALID_DEVICE);
		}
		if (!validStream(stream)) {
			RETURN(CUDA_ERROR_INVALID_HANDLE);
		}
	}
	RETURN(result);
}

/*
 * ---- copies and fills: the bytes move at once, as if every stream were waited for; with GPUMEM_STUB_KERNEL_MICROS
 * the stream's events and waits see the work end that much later ----
 */

static CUresult copy(void *target, const void *source, size_t bytes, CUstream stream) {
	if (!validStream(stream)) {
		return CUDA_ERROR_INVALID_HANDLE;
	}
	memmove(target, source, bytes);
	return CUDA_SUCCESS;
}

STUB_EXPORT CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr target, const void *source, size_t bytes) {
	ENTER();
	add(" target=0x%llx source=%p bytes=%zu target.kind=%s source.kind=%s", (unsigned long long) target, source,
			bytes, describeAddress(target), describeAddress((uintptr_t) source));
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		result = deviceMemory(target, bytes, current->device, NULL) ? copy((void *) target, source, bytes, NULL)
				: CUDA_ERROR_INVALID_VALUE;
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuMemcpyDtoH(void *target, CUdeviceptr source, size_t bytes) {
	ENTER();
	add(" target=%p source=0x%llx bytes=%zu target.kind=%s source.kind=%s", target, (unsigned long long) source,
			bytes, describeAddress((uintptr_t) target), describeAddress(source));
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		result = deviceMemory(source, bytes, current->device, NULL) ? copy(target, (const void *) source, bytes, NULL)
				: CUDA_ERROR_INVALID_VALUE;
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr target, const void *source, size_t bytes,
		CUstream stream) {
	ENTER();
	add(" target=0x%llx source=%p bytes=%zu stream=%p target.kind=%s source.kind=%s", (unsigned long long) target,
			source, bytes, (void *) stream, describeAddress(target), describeAddress((uintptr_t) source));
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		result = deviceMemory(target, bytes, current->device, NULL) ? copy((void *) target, source, bytes, stream)
				: CUDA_ERROR_INVALID_VALUE;
	}
	if (result == CUDA_SUCCESS && validStream(stream)) {
		occupy(stream);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync(void *target, CUdeviceptr source, size_t bytes, CUstream stream) {
	ENTER();
	add(" target=%p source=0x%llx bytes=%zu stream=%p target.kind=%s source.kind=%s", target,
			(unsigned long long) source, bytes, (void *) stream, describeAddress((uintptr_t) target),
			describeAddress(source));
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		result = deviceMemory(source, bytes, current->device, NULL) ? copy(target, (const void *) source, bytes, stream)
				: CUDA_ERROR_INVALID_VALUE;
	}
	if (result == CUDA_SUCCESS && validStream(stream)) {
		occupy(stream);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr target, CUdeviceptr source, size_t bytes,
		CUstream stream) {
	ENTER();
	add(" target=0x%llx source=0x%llx bytes=%zu stream=%p target.kind=%s source.kind=%s",
			(unsigned long long) target, (unsigned long long) source, bytes, (void *) stream, describeAddress(target),
			describeAddress(source));
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		result = (deviceMemory(target, bytes, current->device, NULL) && deviceMemory(source, bytes, current->device, NULL))
				? copy((void *) target, (const void *) source, bytes, stream) : CUDA_ERROR_INVALID_VALUE;
	}
	if (result == CUDA_SUCCESS && validStream(stream)) {
		occupy(stream);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr target, CUcontext targetContext, CUdeviceptr source,
		CUcontext sourceContext, size_t bytes, CUstream stream) {
	ENTER();
	add(" target=0x%llx targetContext=%p source=0x%llx sourceContext=%p bytes=%zu stream=%p",
			(unsigned long long) target, (void *) targetContext, (unsigned long long) source, (void *) sourceContext,
			bytes, (void *) stream);
	CUresult result = inContext();
	if (result == CUDA_SUCCESS) {
		int targetDevice = -1;
		int sourceDevice = -1;
		if (targetContext < &contexts[0] || targetContext >= &contexts[deviceCount] || sourceContext < &contexts[0]
				|| sourceContext >= &contexts[deviceCount]) {
			RETURN(CUDA_ERROR_INVALID_CONTEXT);
		}
		if (!deviceMemory(target, bytes, targetContext->device, &targetDevice)
				|| !deviceMemory(source, bytes, sourceContext->device, &sourceDevice)
				|| targetDevice != targetContext->device || sourceDevice != sourceContext->device) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
		result = copy((void *) target, (const void *) source, bytes, stream);
	}
	RETURN(result);
}

static CUresult fill8(CUdeviceptr target, unsigned char value, size_t count, CUstream stream) {
	if (!deviceMemory(target, count, current->device, NULL)) {
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (!validStream(stream)) {
		return CUDA_ERROR_INVALID_HANDLE;
	}
	memset((void *) target, value, count);
	return CUDA_SUCCESS;
}

static CUresult fill32(CUdeviceptr target, unsigned int value, size_t count, CUstream stream) {
	if (target % 4 != 0 || count > SIZE_MAX / 4 || !deviceMemory(target, count * 4, current->device, NULL)) {
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (!validStream(stream)) {
		return CUDA_ERROR_INVALID_HANDLE;
	}
	for (size_t i = 0; i < count; i++) {
		((unsigned int *) target)[i] = value;
	}
	return CUDA_SUCCESS;
}

STUB_EXPORT CUresult CUDAAPI cuMemsetD8(CUdeviceptr target, unsigned char value, size_t count) {
	ENTER();
	add(" target=0x%llx value=%u count=%zu target.kind=%s", (unsigned long long) target, value, count,
			describeAddress(target));
	CUresult result = inContext();
	RETURN((result == CUDA_SUCCESS) ? fill8(target, value, count, NULL) : result);
}

STUB_EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr target, unsigned char value, size_t count,
		CUstream stream) {
	ENTER();
	add(" target=0x%llx value=%u count=%zu stream=%p target.kind=%s", (unsigned long long) target, value, count,
			(void *) stream, describeAddress(target));
	CUresult result = inContext();
	RETURN((result == CUDA_SUCCESS) ? fill8(target, value, count, stream) : result);
}

STUB_EXPORT CUresult CUDAAPI cuMemsetD32(CUdeviceptr target, unsigned int value, size_t count) {
	ENTER();
	add(" target=0x%llx value=%u count=%zu target.kind=%s", (unsigned long long) target, value, count,
			describeAddress(target));
	CUresult result = inContext();
	RETURN((result == CUDA_SUCCESS) ? fill32(target, value, count, NULL) : result);
}

STUB_EXPORT CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr target, unsigned int value, size_t count,
		CUstream stream) {
	ENTER();
	add(" target=0x%llx value=%u count=%zu stream=%p target.kind=%s", (unsigned long long) target, value, count,
			(void *) stream, describeAddress(target));
	CUresult result = inContext();
	RETURN((result == CUDA_SUCCESS) ? fill32(target, value, count, stream) : result);
}

/* ---- stream-ordered pools ---- */

static void addLocation(const char *prefix, const CUmemLocation *location) {
	add(" %slocation.type=%d %slocation.id=%d", prefix, (int) location->type, prefix, location->id);
}

static int allZero(const unsigned char *bytes, size_t size) {
	for (size_t i = 0; i < size; i++) {
		if (bytes[i] != 0) {
			return 0;
		}
	}
	return 1;
}

STUB_EXPORT CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *properties) {
	ENTER();
	CUresult result = inContext();
	if (properties != NULL) {
		add(" props.allocType=%d props.handleTypes=%d", (int) properties->allocType, (int) properties->handleTypes);
		addLocation("props.", &properties->location);
		add(" props.win32SecurityAttributes=%p props.maxSize=%zu props.usage=%u", properties->win32SecurityAttributes,
				properties->maxSize, properties->usage);
		addHex("props.reserved", properties->reserved, sizeof(properties->reserved));
		addHex("props.bytes", properties, sizeof(*properties));
	}
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (pool == NULL || properties == NULL || properties->allocType != CU_MEM_ALLOCATION_TYPE_PINNED
			|| properties->handleTypes != CU_MEM_HANDLE_TYPE_NONE
			|| properties->location.type != CU_MEM_LOCATION_TYPE_DEVICE || properties->win32SecurityAttributes != NULL
			|| properties->usage != 0 || !allZero(properties->reserved, sizeof(properties->reserved))) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	if (!validDevice(properties->location.id)) {
		RETURN(CUDA_ERROR_INVALID_DEVICE);
	}
	struct CUmemPoolHandle_st *created = listed(&pools, sizeof(*created));
	created->head.device = properties->location.id;
	*pool = created;
	add(" pool=%p", (void *) created);
	RETURN(CUDA_SUCCESS);
}

STUB_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *pointer, size_t bytes, CUmemoryPool pool,
		CUstream stream) {
	ENTER();
	add(" bytes=%zu pool=%p stream=%p", bytes, (void *) pool, (void *) stream);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (!holds(pools, pool) || !validStream(stream)) {
		RETURN(CUDA_ERROR_INVALID_HANDLE);
	}
	result = allocate(pointer, bytes, POOLED, pool->head.device, pool);
	if (result == CUDA_SUCCESS) {
		pool->allocations++;
		add(" pointer=0x%llx", (unsigned long long) *pointer);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr pointer, CUstream stream) {
	ENTER();
	add(" pointer=0x%llx stream=%p kind=%s", (unsigned long long) pointer, (void *) stream, describeAddress(pointer));
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (!validStream(stream)) {
		RETURN(CUDA_ERROR_INVALID_HANDLE);
	}
	struct region *r = regionStarting(pointer, POOLED);
	if (r == NULL) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	if (r->pool != NULL) {
		((struct CUmemPoolHandle_st *) r->pool)->allocations--;
	}
	forget(r);
	RETURN(CUDA_SUCCESS);
}

STUB_EXPORT CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t keepBytes) {
	ENTER();
	add(" pool=%p keepBytes=%zu", (void *) pool, keepBytes);
	CUresult result = inContext();
	RETURN((result == CUDA_SUCCESS && !holds(pools, pool)) ? CUDA_ERROR_INVALID_VALUE : result);
}

STUB_EXPORT CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool) {
	ENTER();
	add(" pool=%p", (void *) pool);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (!holds(pools, pool)) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	add(" outstanding=%d", pool->allocations);
	for (struct region *r = regions; r != NULL; r = r->next) {
		if (r->pool == pool) {
			r->pool = NULL;
		}
	}
	drop(&pools, pool);
	RETURN(CUDA_SUCCESS);
}

/* ---- virtual memory management ---- */

/* Whether [pointer, pointer + bytes) is whole mappings side by side, as cuMemUnmap and cuMemSetAccess require. */
static int wholeMappings(uintptr_t pointer, size_t bytes) {
	if (bytes == 0) {
		return 0;
	}
	for (uintptr_t at = pointer; at < pointer + bytes;) {
		struct mapping *m = mappingAt(at);
		if (m == NULL || m->address != at || m->address + m->size > pointer + bytes) {
			return 0;
		}
		at += m->size;
	}
	return 1;
}

STUB_EXPORT CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *pointer, size_t bytes, size_t alignment,
		CUdeviceptr hint, unsigned long long flags) {
	ENTER();
	add(" bytes=%zu alignment=%zu hint=0x%llx flags=%llu", bytes, alignment, (unsigned long long) hint, flags);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (pointer == NULL || bytes == 0 || bytes % GRANULARITY != 0 || (alignment & (alignment - 1)) != 0
			|| flags != 0) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	size_t align = (alignment > GRANULARITY) ? alignment : GRANULARITY;
	if (bytes > SIZE_MAX - align) {
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	}
	void *area = mmap(NULL, bytes + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (area == MAP_FAILED) {
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	}
	uintptr_t base = ((uintptr_t) area + align - 1) / align * align;
	if (base > (uintptr_t) area) {
		munmap(area, base - (uintptr_t) area);
	}
	munmap((void *) (base + bytes), (uintptr_t) area + bytes + align - (base + bytes));
	struct region *r = zeroed(sizeof(*r));
	r->base = base;
	r->size = bytes;
	r->mappedSize = bytes;
	r->kind = RESERVED;
	r->device = current->device;
	r->next = regions;
	regions = r;
	*pointer = (CUdeviceptr) base;
	add(" pointer=0x%llx", (unsigned long long) base);
	RETURN(CUDA_SUCCESS);
}

STUB_EXPORT CUresult CUDAAPI cuMemAddressFree(CUdeviceptr pointer, size_t bytes) {
	ENTER();
	add(" pointer=0x%llx bytes=%zu", (unsigned long long) pointer, bytes);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	struct region *r = regionStarting(pointer, RESERVED);
	if (r == NULL || r->size != bytes) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	for (struct mapping *m = mappings; m != NULL; m = m->next) {
		if (m->address >= r->base && m->address < r->base + r->size) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
	}
	forget(r);
	RETURN(CUDA_SUCCESS);
}

STUB_EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr pointer, size_t bytes) {
	ENTER();
	add(" pointer=0x%llx bytes=%zu", (unsigned long long) pointer, bytes);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (!wholeMappings(pointer, bytes)) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	for (struct mapping **m = &mappings; *m != NULL;) {
		struct mapping *gone = *m;
		if (gone->address >= pointer && gone->address < pointer + bytes) {
			*m = gone->next;
			mmap((void *) gone->address, gone->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
					-1, 0);
			if (--gone->memory->mappings == 0 && gone->memory->released) {
				dropPhysical(gone->memory);
			}
			free(gone);
		}
		else {
			m = &gone->next;
		}
	}
	RETURN(CUDA_SUCCESS);
}

STUB_EXPORT CUresult CUDAAPI cuMemSetAccess(CUdeviceptr pointer, size_t bytes, const CUmemAccessDesc *descriptors,
		size_t count) {
	ENTER();
	add(" pointer=0x%llx bytes=%zu count=%zu", (unsigned long long) pointer, bytes, count);
	for (size_t i = 0; descriptors != NULL && i < count && i < 8; i++) {
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "desc[%zu].", i);
		addLocation(prefix, &descriptors[i].location);
		add(" desc[%zu].flags=%d", i, (int) descriptors[i].flags);
		snprintf(prefix, sizeof(prefix), "desc[%zu].bytes", i);
		addHex(prefix, &descriptors[i], sizeof(descriptors[i]));
	}
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (descriptors == NULL || count == 0) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	for (size_t i = 0; i < count; i++) {
		CUmemAccessDesc d = descriptors[i];
		if (d.location.type != CU_MEM_LOCATION_TYPE_DEVICE || (d.flags != CU_MEM_ACCESS_FLAGS_PROT_NONE
				&& d.flags != CU_MEM_ACCESS_FLAGS_PROT_READ && d.flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
		if (!validDevice(d.location.id)) {
			RETURN(CUDA_ERROR_INVALID_DEVICE);
		}
	}
	if (!wholeMappings(pointer, bytes)) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	for (struct mapping *m = mappings; m != NULL; m = m->next) {
		if (m->address >= pointer && m->address < pointer + bytes) {
			for (size_t i = 0; i < count; i++) {
				m->access[descriptors[i].location.id] = descriptors[i].flags;
			}
			/* the host pages stand for every device's view: open as far as the most any device is let */
			int most = CU_MEM_ACCESS_FLAGS_PROT_NONE;
			for (int device = 0; device < MAX_DEVICES; device++) {
				most = ((int) m->access[device] > most) ? (int) m->access[device] : most;
			}
			mprotect((void *) m->address, m->size, (most == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
					? PROT_READ | PROT_WRITE : (most == CU_MEM_ACCESS_FLAGS_PROT_READ) ? PROT_READ : PROT_NONE);
		}
	}
	RETURN(CUDA_SUCCESS);
}

#ifndef GPUMEM_STUB_NO_VIRTUAL_MEMORY

/* Handles of physical memory: numbers of the stub's, so that one garbled on its way back is refused. */
static unsigned long long nextHandle = 0x5eed00000001ull;

static void addAllocationProperties(const CUmemAllocationProp *p) {
	add(" prop.type=%d prop.requestedHandleTypes=%d", (int) p->type, (int) p->requestedHandleTypes);
	addLocation("prop.", &p->location);
	add(" prop.win32HandleMetaData=%p prop.allocFlags.compressionType=%u prop.allocFlags.gpuDirectRDMACapable=%u"
			" prop.allocFlags.usage=%u", p->win32HandleMetaData, p->allocFlags.compressionType,
			p->allocFlags.gpuDirectRDMACapable, p->allocFlags.usage);
	addHex("prop.allocFlags.reserved", p->allocFlags.reserved, sizeof(p->allocFlags.reserved));
	addHex("prop.bytes", p, sizeof(*p));
}

/* What the H100 refuses of allocation properties (docs/gpu-verification.md), and what gpumem never asks for. */
static CUresult checkAllocationProperties(const CUmemAllocationProp *p) {
	if (p == NULL || p->type != CU_MEM_ALLOCATION_TYPE_PINNED || p->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE
			|| p->location.type != CU_MEM_LOCATION_TYPE_DEVICE || p->win32HandleMetaData != NULL
			|| p->allocFlags.compressionType != 0 || !allZero(p->allocFlags.reserved, sizeof(p->allocFlags.reserved))) {
		return CUDA_ERROR_INVALID_VALUE;
	}
	return validDevice(p->location.id) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

STUB_EXPORT CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
		CUmemAllocationGranularity_flags option) {
	ENTER();
	add(" option=%d", (int) option);
	if (prop != NULL) {
		addAllocationProperties(prop);
	}
	CUresult result = ready();
	if (result == CUDA_SUCCESS) {
		result = checkAllocationProperties(prop);
	}
	if (result == CUDA_SUCCESS && (granularity == NULL || ((int) option != CU_MEM_ALLOC_GRANULARITY_MINIMUM
			&& (int) option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))) {
		result = CUDA_ERROR_INVALID_VALUE;
	}
	if (result == CUDA_SUCCESS) {
		*granularity = GRANULARITY;
		add(" granularity=%zu", *granularity);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t bytes,
		const CUmemAllocationProp *prop, unsigned long long flags) {
	ENTER();
	add(" bytes=%zu flags=%llu", bytes, flags);
	if (prop != NULL) {
		addAllocationProperties(prop);
	}
	CUresult result = ready();
	if (result == CUDA_SUCCESS) {
		result = checkAllocationProperties(prop);
	}
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (handle == NULL || bytes == 0 || bytes % GRANULARITY != 0 || flags != 0) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	int device = prop->location.id;
	if (bytes > deviceBytes - used[device]) {
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	}
	int fd = memfd_create("gpumem-stub-physical", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t) bytes) != 0) {
		if (fd >= 0) {
			close(fd);
		}
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	}
	struct physical *p = zeroed(sizeof(*p));
	p->handle = nextHandle++;
	p->fd = fd;
	p->size = bytes;
	p->device = device;
	p->next = physicals;
	physicals = p;
	used[device] += bytes;
	*handle = p->handle;
	add(" handle=0x%llx", p->handle);
	RETURN(CUDA_SUCCESS);
}

static struct physical *physicalOf(CUmemGenericAllocationHandle handle) {
	for (struct physical *p = physicals; p != NULL; p = p->next) {
		if (p->handle == handle && !p->released) {
			return p;
		}
	}
	return NULL;
}

STUB_EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle) {
	ENTER();
	add(" handle=0x%llx", (unsigned long long) handle);
	CUresult result = ready();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	struct physical *p = physicalOf(handle);
	if (p == NULL) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	add(" mappings=%d", p->mappings);
	p->released = 1;
	if (p->mappings == 0) {
		dropPhysical(p);
	}
	RETURN(CUDA_SUCCESS);
}

STUB_EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr pointer, size_t bytes, size_t offset,
		CUmemGenericAllocationHandle handle, unsigned long long flags) {
	ENTER();
	add(" pointer=0x%llx bytes=%zu offset=%zu handle=0x%llx flags=%llu", (unsigned long long) pointer, bytes, offset,
			(unsigned long long) handle, flags);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	struct physical *p = physicalOf(handle);
	if (p == NULL) {
		RETURN(CUDA_ERROR_INVALID_HANDLE);
	}
	struct region *r = regionAt(pointer);
	if (flags != 0 || bytes == 0 || bytes % GRANULARITY != 0 || offset % GRANULARITY != 0 || pointer % GRANULARITY != 0
			|| offset + bytes > p->size || r == NULL || r->kind != RESERVED || bytes > r->base + r->size - pointer) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	for (struct mapping *m = mappings; m != NULL; m = m->next) {
		if (m->address < pointer + bytes && pointer < m->address + m->size) {
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
	}
	if (mmap((void *) pointer, bytes, PROT_NONE, MAP_SHARED | MAP_FIXED, p->fd, (off_t) offset) == MAP_FAILED) {
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	}
	struct mapping *m = zeroed(sizeof(*m));
	m->address = pointer;
	m->size = bytes;
	m->memory = p;
	m->next = mappings;
	mappings = m;
	p->mappings++;
	RETURN(CUDA_SUCCESS);
}

#endif

/* ---- streams and events ---- */

STUB_EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *stream, unsigned int flags) {
	ENTER();
	add(" flags=%u", flags);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (stream == NULL || (flags != CU_STREAM_DEFAULT && flags != CU_STREAM_NON_BLOCKING)) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	struct CUstream_st *s = listed(&streams, sizeof(*s));
	*stream = s;
	add(" stream=%p", (void *) s);
	RETURN(CUDA_SUCCESS);
}

STUB_EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream stream) {
	ENTER();
	add(" stream=%p", (void *) stream);
	CUresult result = inContext();
	if (result == CUDA_SUCCESS && !validStream(stream)) {
		result = CUDA_ERROR_INVALID_HANDLE;
	}
	long long until = (result == CUDA_SUCCESS) ? *busyUntil(stream) : 0;
	CUresult answer = end(result);
	pthread_mutex_unlock(&lock);
	sleepUntil(until);
	return answer;
}

/* Waits for the work of every stream of the current context and of the default streams. */
STUB_EXPORT CUresult CUDAAPI cuCtxSynchronize(void) {
	ENTER();
	CUresult result = inContext();
	long long until = (result == CUDA_SUCCESS) ? defaultBusyUntil : 0;
	for (struct handle *h = streams; result == CUDA_SUCCESS && h != NULL; h = h->next) {
		long long busy = ((struct CUstream_st *) h)->busyUntil;
		if (h->device == current->device && busy > until) {
			until = busy;
		}
	}
	CUresult answer = end(result);
	pthread_mutex_unlock(&lock);
	sleepUntil(until);
	return answer;
}

STUB_EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream stream) {
	ENTER();
	add(" stream=%p", (void *) stream);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	RETURN(drop(&streams, stream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

STUB_EXPORT CUresult CUDAAPI cuEventCreate(CUevent *event, unsigned int flags) {
	ENTER();
	add(" flags=%u", flags);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
	if (event == NULL || (flags & ~known) != 0) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	struct CUevent_st *e = listed(&events, sizeof(*e));
	*event = e;
	add(" event=%p", (void *) e);
	RETURN(CUDA_SUCCESS);
}

STUB_EXPORT CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream) {
	ENTER();
	add(" event=%p stream=%p", (void *) event, (void *) stream);
	CUresult result = inContext();
	if (result == CUDA_SUCCESS && (!ours(events, event) || !validStream(stream))) {
		result = CUDA_ERROR_INVALID_HANDLE;
	}
	if (result == CUDA_SUCCESS) {
		event->unasked = 1;
		event->at = *busyUntil(stream);
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuEventQuery(CUevent event) {
	ENTER();
	add(" event=%p", (void *) event);
	CUresult result = inContext();
	if (result == CUDA_SUCCESS && !holds(events, event)) {
		result = CUDA_ERROR_INVALID_HANDLE;
	}
	/* the work ran when enqueued, but the first ask after a record is told it has not, so that waits are made */
	if (result == CUDA_SUCCESS && event->unasked) {
		event->unasked = 0;
		result = CUDA_ERROR_NOT_READY;
	}
	if (result == CUDA_SUCCESS && monotonicNanos() < event->at) {
		result = CUDA_ERROR_NOT_READY;
	}
	RETURN(result);
}

STUB_EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent event) {
	ENTER();
	add(" event=%p", (void *) event);
	CUresult result = inContext();
	if (result == CUDA_SUCCESS && !holds(events, event)) {
		result = CUDA_ERROR_INVALID_HANDLE;
	}
	long long until = 0;
	if (result == CUDA_SUCCESS) {
		event->unasked = 0;
		until = event->at;
	}
	CUresult answer = end(result);
	pthread_mutex_unlock(&lock);
	sleepUntil(until);
	return answer;
}

STUB_EXPORT CUresult CUDAAPI cuEventDestroy(CUevent event) {
	ENTER();
	add(" event=%p", (void *) event);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	RETURN(drop(&events, event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

/* ---- modules and kernels ---- */

/* The bytes of a PTX parameter type: .u32 4, .f64 8, .b8 1, an array [n] n times. */
static size_t parameterBytes(const char *type, const char *after) {
	size_t width = (size_t) atoi(type + 2) / 8;
	if (width == 0) {
		width = (strncmp(type, ".pred", 5) == 0) ? 1 : 0;
	}
	const char *bracket = strchr(after, '[');
	const char *close = strpbrk(after, ",)");
	if (bracket != NULL && (close == NULL || bracket < close)) {
		width *= (size_t) atoi(bracket + 1);
	}
	return width;
}

/* The entry points of a PTX module and the bytes of each one's parameters, as the driver's loader reads them. */
static int parseEntries(const char *ptx, struct CUfunc_st *functions, int capacity) {
	int count = 0;
	for (const char *at = strstr(ptx, ".entry"); at != NULL && count < capacity; at = strstr(at + 6, ".entry")) {
		struct CUfunc_st *f = &functions[count];
		const char *name = at + 6;
		while (isspace((unsigned char) *name)) {
			name++;
		}
		size_t length = 0;
		while (name[length] != 0 && (isalnum((unsigned char) name[length]) || name[length] == '_'
				|| name[length] == '$')) {
			length++;
		}
		if (length == 0 || length >= sizeof(f->name)) {
			continue;
		}
		memcpy(f->name, name, length);
		f->name[length] = 0;
		const char *open = strchr(name + length, '(');
		const char *brace = strchr(name + length, '{');
		if (open != NULL && (brace == NULL || open < brace)) {
			const char *close = strchr(open, ')');
			for (const char *p = strstr(open, ".param"); p != NULL && p < close && f->params < MAX_PARAMS;
					p = strstr(p + 6, ".param")) {
				const char *type = p + 6;
				while (isspace((unsigned char) *type)) {
					type++;
				}
				if (strncmp(type, ".align", 6) == 0) {
					type += 6;
					while (isspace((unsigned char) *type) || isdigit((unsigned char) *type)) {
						type++;
					}
				}
				f->sizes[f->params++] = parameterBytes(type, type);
			}
		}
		count++;
	}
	return count;
}

STUB_EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
	ENTER();
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (module == NULL || image == NULL) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	const char *text = image;
	if (strstr(text, ".version") == NULL || strstr(text, ".target") == NULL) {
		RETURN(CUDA_ERROR_INVALID_IMAGE);
	}
	struct CUmod_st *m = listed(&modules, sizeof(*m));
	m->functions = parseEntries(text, m->function, sizeof(m->function) / sizeof(m->function[0]));
	for (int i = 0; i < m->functions; i++) {
		add(" entry[%d]=%s/%d", i, m->function[i].name, m->function[i].params);
	}
	*module = m;
	add(" module=%p", (void *) m);
	RETURN(CUDA_SUCCESS);
}

STUB_EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
	ENTER();
	add(" module=%p name=%s", (void *) module, (name != NULL) ? name : "(null)");
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (!ours(modules, module)) {
		RETURN(CUDA_ERROR_INVALID_HANDLE);
	}
	if (function == NULL || name == NULL) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	for (int i = 0; i < module->functions; i++) {
		if (strcmp(module->function[i].name, name) == 0) {
			*function = &module->function[i];
			add(" function=%p", (void *) *function);
			RETURN(CUDA_SUCCESS);
		}
	}
	RETURN(CUDA_ERROR_NOT_FOUND);
}

STUB_EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule module) {
	ENTER();
	add(" module=%p", (void *) module);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	RETURN(drop(&modules, module) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

/*
 * Records each parameter's bytes, as many as the PTX declares, and where an 8-byte one points; runs nothing. A
 * launch of GPUMEM_STUB_FAULTING_KERNEL succeeds and leaves CUDA_ERROR_ILLEGAL_ADDRESS for every later call, as a
 * kernel that writes out of bounds does.
 */
STUB_EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction function, unsigned int gridX, unsigned int gridY,
		unsigned int gridZ, unsigned int blockX, unsigned int blockY, unsigned int blockZ, unsigned int sharedBytes,
		CUstream stream, void **parameters, void **extra) {
	ENTER();
	struct CUfunc_st *f = validFunction(function);
	add(" function=%s grid=%u,%u,%u block=%u,%u,%u sharedBytes=%u stream=%p extra=%p", (f != NULL) ? f->name : "?",
			gridX, gridY, gridZ, blockX, blockY, blockZ, sharedBytes, (void *) stream, (void *) extra);
	CUresult result = inContext();
	if (result != CUDA_SUCCESS) {
		RETURN(result);
	}
	if (f == NULL || !validStream(stream)) {
		RETURN(CUDA_ERROR_INVALID_HANDLE);
	}
	if (gridX == 0 || gridY == 0 || gridZ == 0 || blockX == 0 || blockY == 0 || blockZ == 0
			|| (unsigned long long) blockX * blockY * blockZ > 1024 || sharedBytes > 48 * 1024 || extra != NULL
			|| (f->params > 0 && parameters == NULL)) {
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	for (int i = 0; i < f->params; i++) {
		char key[32];
		snprintf(key, sizeof(key), "param[%d]", i);
		addHex(key, parameters[i], f->sizes[i]);
		if (f->sizes[i] == 8) {
			uintptr_t address;
			memcpy(&address, parameters[i], 8);
			add(" param[%d].kind=%s", i, describeAddress(address));
		}
	}
	if (faultingKernel[0] != 0 && strcmp(faultingKernel, f->name) == 0) {
		sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
		add(" fault=%d", (int) sticky);
	}
	occupy(stream);
	RETURN(CUDA_SUCCESS);
}

/* ---- the stub's own calls, for tests ---- */

/*
 * Copies as many whole records, one call a line, as fit into buffer, NUL-terminated; answers the length of all of
 * them, so that a caller whose buffer was short asks again with a larger one.
 */
STUB_EXPORT size_t gpumemStubRecords(char *buffer, size_t capacity) {
	pthread_mutex_lock(&lock);
	size_t length = recordsLength;
	if (buffer != NULL && capacity > 0) {
		size_t n = (length < capacity) ? length : capacity - 1;
		while (n > 0 && records[n - 1] != '\n') {
			n--;
		}
		memcpy(buffer, (records != NULL) ? records : "", n);
		buffer[n] = 0;
	}
	pthread_mutex_unlock(&lock);
	return length;
}

STUB_EXPORT void gpumemStubClearRecords(void) {
	pthread_mutex_lock(&lock);
	recordsLength = 0;
	pthread_mutex_unlock(&lock);
}

/* Takes back every refusal, driver version and attribute a test set. */
STUB_EXPORT void gpumemStubReset(void) {
	pthread_mutex_lock(&lock);
	while (refusals != NULL) {
		struct refusal *gone = refusals;
		refusals = gone->next;
		free(gone);
	}
	driverVersion = DRIVER_VERSION;
	memset(attributeOverridden, 0, sizeof(attributeOverridden));
	pthread_mutex_unlock(&lock);
}

/* Makes every later call to the entry point named (without its _v2) answer code; 0 takes the refusal back. */
STUB_EXPORT void gpumemStubRefuse(const char *name, int code) {
	pthread_mutex_lock(&lock);
	for (struct refusal **r = &refusals; *r != NULL; r = &(*r)->next) {
		if (strcmp((*r)->call, name) == 0) {
			struct refusal *gone = *r;
			*r = gone->next;
			free(gone);
			break;
		}
	}
	if (code != 0) {
		struct refusal *r = zeroed(sizeof(*r));
		snprintf(r->call, sizeof(r->call), "%s", name);
		r->code = (CUresult) code;
		r->next = refusals;
		refusals = r;
	}
	pthread_mutex_unlock(&lock);
}

/* The CUDA version cuDriverGetVersion answers; 0 restores the stub's own. */
STUB_EXPORT void gpumemStubSetDriverVersion(int version) {
	pthread_mutex_lock(&lock);
	driverVersion = (version == 0) ? DRIVER_VERSION : version;
	pthread_mutex_unlock(&lock);
}

/* The value cuDeviceGetAttribute answers for attribute on every device; a negative value restores the stub's own. */
STUB_EXPORT void gpumemStubSetAttribute(int attribute, int value) {
	if (attribute > 0 && attribute < 256) {
		pthread_mutex_lock(&lock);
		attributeOverridden[attribute] = (value >= 0);
		attributeOverride[attribute] = value;
		pthread_mutex_unlock(&lock);
	}
}

/*
 * What is still held, as "name=count" pairs: allocations of each kind, physical memory, mappings, handles and
 * retained contexts; and, of each kind, the allocations destroyed contexts took with them.
 */
STUB_EXPORT size_t gpumemStubHoldings(char *buffer, size_t capacity) {
	pthread_mutex_lock(&lock);
	int counts[RESERVED + 1] = { 0 };
	for (struct region *r = regions; r != NULL; r = r->next) {
		counts[r->kind]++;
	}
	int n[6] = { 0, 0, count(streams), count(events), count(modules), count(pools) };
	for (struct physical *p = physicals; p != NULL; p = p->next) {
		n[0]++;
	}
	for (struct mapping *m = mappings; m != NULL; m = m->next) {
		n[1]++;
	}
	int retained = 0;
	for (int i = 0; i < MAX_DEVICES; i++) {
		retained += contexts[i].retained;
	}
	int length = snprintf(buffer, capacity, "device=%d managed=%d pinned=%d pooled=%d reserved=%d physical=%d "
			"mappings=%d streams=%d events=%d modules=%d pools=%d contexts=%d freedWithContext.device=%d "
			"freedWithContext.managed=%d freedWithContext.pinned=%d freedWithContext.pooled=%d "
			"freedWithContext.handles=%d", counts[DEVICE],
			counts[MANAGED], counts[PINNED], counts[POOLED], counts[RESERVED], n[0], n[1], n[2], n[3], n[4], n[5], retained,
			freedWithContext[DEVICE], freedWithContext[MANAGED], freedWithContext[PINNED], freedWithContext[POOLED],
			handlesFreedWithContext);
	pthread_mutex_unlock(&lock);
	return (size_t) length;
}
