package io.gpumem.cuda;

import java.util.Set;

import io.gpumem.memory.GpuMemoryException;

/** A CUDA driver call that did not succeed, with the call and its result code by number and by name. */
public class CudaException extends GpuMemoryException {

	/** {@code CUDA_ERROR_OUT_OF_MEMORY}. */
	public static final int OUT_OF_MEMORY = 2;

	/** {@code CUDA_ERROR_INSUFFICIENT_DRIVER}. */
	public static final int INSUFFICIENT_DRIVER = 35;

	/** {@code CUDA_ERROR_NO_DEVICE}. */
	public static final int NO_DEVICE = 100;

	/** {@code CUDA_ERROR_INVALID_CONTEXT}. */
	public static final int INVALID_CONTEXT = 201;

	/** {@code CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED}. */
	public static final int PEER_ACCESS_ALREADY_ENABLED = 704;

	/** {@code CUDA_ERROR_NOT_READY}. */
	public static final int NOT_READY = 600;

	/**
	 * The errors after which CUDA's documentation says "any further CUDA work will return the same error" and
	 * "the process must be terminated and relaunched": faults of a kernel, of the hardware, or of its memory.
	 */
	private static final Set<Integer> POISONING = Set.of(214, 220, 700, 702, 710, 714, 715, 716, 717, 718, 719);

	private final int code;

	private final String codeName;

	private final String call;

	public CudaException(String call, int code, String codeName) {
		super(call + " failed: " + codeName + " (" + code + ")");
		this.call = call;
		this.code = code;
		this.codeName = codeName;
	}

	/** The driver call, such as {@code cuMemAlloc}. */
	public String call() {
		return this.call;
	}

	/** The {@code CUresult} code. */
	public int code() {
		return this.code;
	}

	/**
	 * Whether this error leaves the context unusable for good: {@code CUDA_ERROR_ILLEGAL_ADDRESS},
	 * {@code LAUNCH_TIMEOUT}, {@code ASSERT}, {@code HARDWARE_STACK_ERROR}, {@code ILLEGAL_INSTRUCTION},
	 * {@code MISALIGNED_ADDRESS}, {@code INVALID_ADDRESS_SPACE}, {@code INVALID_PC}, {@code LAUNCH_FAILED}, and
	 * uncorrectable ECC and NVLink errors.
	 */
	public boolean poisonsContext() {
		return POISONING.contains(this.code);
	}

	/** The code's name, such as {@code CUDA_ERROR_ILLEGAL_ADDRESS}. */
	public String codeName() {
		return this.codeName;
	}

}
