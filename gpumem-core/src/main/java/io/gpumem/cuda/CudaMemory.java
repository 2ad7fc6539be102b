package io.gpumem.cuda;

import io.gpumem.memory.MemoryKind;

/** What a CUDA stream needs of a buffer's memory: its device, kind and native pointer. */
interface CudaMemory {

	CudaDevice device();

	MemoryKind kind();

	/** The native pointer to the first byte. */
	Object pointer();

}
