package io.gpumem.sample;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

import io.gpumem.sample.limits.HeapBudget;

/**
 * Limits of the sample service's requests.
 *
 * @param maxElements the most elements a vector, or nodes or edges a graph, may have
 * @param maxIterations the most PageRank iterations a request may ask for
 * @param maxBodySize the largest request body; by default room for two vectors of {@code maxElements}
 * numbers written out in full ({@value #BODY_BYTES_PER_ELEMENT} bytes an element), and never more than a
 * body whose parsing the heap budget can hold
 * @param heapBudget the heap that requests in flight may hold at once, their bodies and arrays together;
 * by default half the JVM's maximum heap
 * @param queueTimeout how long a request waits for room in the heap budget before it answers 503
 * @param requestTimeout how long a request may take from arrival to answer; past it, its work stops and it
 * answers 503
 */
@ConfigurationProperties("sample")
public record SampleProperties(Integer maxElements, Integer maxIterations, DataSize maxBodySize,
		DataSize heapBudget, Duration queueTimeout, Duration requestTimeout) {

	/** Bytes of JSON an element of a request may take, for the default body limit. */
	public static final int BODY_BYTES_PER_ELEMENT = 24;

	public SampleProperties {
		maxElements = (maxElements != null) ? maxElements : 16 * 1024 * 1024;
		maxIterations = (maxIterations != null) ? maxIterations : 1000;
		heapBudget = (heapBudget != null) ? heapBudget : DataSize.ofBytes(Runtime.getRuntime().maxMemory() / 2);
		maxBodySize = (maxBodySize != null) ? maxBodySize
				: DataSize.ofBytes(Math.min((long) maxElements * BODY_BYTES_PER_ELEMENT,
						heapBudget.toBytes() / HeapBudget.BYTES_PER_BODY_BYTE));
		queueTimeout = (queueTimeout != null) ? queueTimeout : Duration.ofSeconds(5);
		requestTimeout = (requestTimeout != null) ? requestTimeout : Duration.ofSeconds(60);
		positive("sample.max-elements", maxElements);
		positive("sample.max-iterations", maxIterations);
		positive("sample.max-body-size", maxBodySize.toBytes());
		positive("sample.heap-budget", heapBudget.toBytes());
		positive("sample.request-timeout", requestTimeout.toMillis());
		if (queueTimeout.isNegative()) {
			throw new IllegalArgumentException("sample.queue-timeout must not be negative, not " + queueTimeout);
		}
	}

	/**
	 * Checks a count against the element limit.
	 * @throws IllegalArgumentException naming {@code what} and the limit when it is above
	 */
	public void checkSize(String what, long count) {
		if (count > this.maxElements) {
			throw new IllegalArgumentException(what + " has " + count + " elements, more than the limit of "
					+ this.maxElements + " (sample.max-elements)");
		}
	}

	private static void positive(String property, long value) {
		if (value <= 0) {
			throw new IllegalArgumentException(property + " must be positive, not " + value);
		}
	}

}
