package io.gpumem.cuda;

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

	/** The code's name, such as {@code CUDA_ERROR_ILLEGAL_ADDRESS}. */
	public String codeName() {
		return this.codeName;
	}

}
