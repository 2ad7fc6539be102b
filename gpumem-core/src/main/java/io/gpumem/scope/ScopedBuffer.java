package io.gpumem.scope;

import java.util.concurrent.atomic.AtomicBoolean;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.stream.GpuStream;

/** A buffer of a {@link MemoryScope}: closed with the scope, or on its own before it. */
public final class ScopedBuffer extends GpuBuffer {

	private final MemoryScope scope;

	private final PooledBuffer pooled;

	private final ElementType elementType;

	private final AtomicBoolean closed = new AtomicBoolean();

	ScopedBuffer(MemoryScope scope, PooledBuffer pooled, ElementType elementType) {
		this.scope = scope;
		this.pooled = pooled;
		this.elementType = elementType;
	}

	/** The element type it was allocated for, or {@code null} for a raw allocation. */
	public ElementType elementType() {
		return this.elementType;
	}

	/** Elements of {@link #elementType()} it holds; its size in bytes for a raw allocation. */
	public long elementCount() {
		return (this.elementType != null) ? size() / this.elementType.bytes() : size();
	}

	@Override
	public long size() {
		return this.pooled.size();
	}

	@Override
	public MemoryKind kind() {
		return this.pooled.kind();
	}

	@Override
	public boolean isClosed() {
		return this.closed.get();
	}

	@Override
	public void close() {
		if (this.closed.compareAndSet(false, true)) {
			this.scope.closed(this);
			this.pooled.close();
		}
	}

	/**
	 * Returns the memory to the pool once the stream's work so far has completed; see {@link PooledBuffer#closeAfter}.
	 * Where that fails (a closed stream), the buffer stays open, in the scope's books.
	 */
	public void closeAfter(GpuStream stream) {
		if (this.closed.compareAndSet(false, true)) {
			try {
				this.pooled.closeAfter(stream);
			}
			catch (RuntimeException | Error ex) {
				this.closed.set(false);
				throw ex;
			}
			this.scope.closed(this);
		}
	}

	@Override
	protected Allocation allocation() {
		checkOpen();
		return allocationOf(this.pooled);
	}

	@Override
	protected Allocation beginUse() {
		checkOpen();
		return beginUseOf(this.pooled);
	}

	@Override
	protected void endUse() {
		endUseOf(this.pooled);
	}

	private void checkOpen() {
		if (this.closed.get()) {
			throw new IllegalStateException("buffer of " + size() + " bytes of scope '" + this.scope.name()
					+ "' used after close");
		}
	}

	@Override
	public String toString() {
		return "ScopedBuffer[" + this.scope.name() + ", " + size() + " bytes"
				+ ((this.elementType != null) ? ", " + elementCount() + " " + this.elementType : "")
				+ (isClosed() ? ", closed" : "") + "]";
	}

}
