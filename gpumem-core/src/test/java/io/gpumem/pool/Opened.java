package io.gpumem.pool;

import java.util.ArrayList;
import java.util.List;

/** What a test opened, closed in reverse order after it: pools before the backends they draw on. */
final class Opened implements AutoCloseable {

	private final List<AutoCloseable> opened = new ArrayList<>();

	/** {@code closeable}, to be closed after the test. */
	<T extends AutoCloseable> T add(T closeable) {
		this.opened.add(closeable);
		return closeable;
	}

	@Override
	public void close() throws Exception {
		for (int i = this.opened.size() - 1; i >= 0; i--) {
			this.opened.get(i).close();
		}
	}

}
