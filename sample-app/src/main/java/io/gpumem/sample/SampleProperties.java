package io.gpumem.sample;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Limits of the sample service's requests.
 *
 * @param maxElements the most elements a vector, or nodes or edges a graph, may have
 * @param maxIterations the most PageRank iterations a request may ask for
 */
@ConfigurationProperties("sample")
public record SampleProperties(Integer maxElements, Integer maxIterations) {

	public SampleProperties {
		maxElements = (maxElements != null) ? maxElements : 16 * 1024 * 1024;
		maxIterations = (maxIterations != null) ? maxIterations : 1000;
		if (maxElements <= 0 || maxIterations <= 0) {
			throw new IllegalArgumentException("sample.max-elements and sample.max-iterations must be positive");
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

}
