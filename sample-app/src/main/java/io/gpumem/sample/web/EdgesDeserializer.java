package io.gpumem.sample.web;

import java.util.Arrays;

import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.ValueDeserializer;

import io.gpumem.sample.graphs.Edges;

/**
 * Reads {@code [[source, target], …]} straight into {@link Edges}, pair by pair, so that a request's edges
 * take no more heap than their ids; anything but pairs of integers in int range is refused, naming the edge.
 */
class EdgesDeserializer extends ValueDeserializer<Edges> {

	@Override
	public Edges deserialize(JsonParser parser, DeserializationContext context) {
		if (!parser.isExpectedStartArrayToken()) {
			return context.reportInputMismatch(Edges.class, "edges must be an array of [source, target] pairs");
		}
		int[] sources = new int[16];
		int[] targets = new int[16];
		int count = 0;
		for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
			if (token != JsonToken.START_ARRAY) {
				return notAPair(context, count);
			}
			long source = id(parser, context, count);
			long target = id(parser, context, count);
			if (parser.nextToken() != JsonToken.END_ARRAY) {
				return notAPair(context, count);
			}
			if (count == sources.length) {
				sources = Arrays.copyOf(sources, count * 2);
				targets = Arrays.copyOf(targets, count * 2);
			}
			sources[count] = (int) source;
			targets[count] = (int) target;
			count++;
		}
		return new Edges(Arrays.copyOf(sources, count), Arrays.copyOf(targets, count));
	}

	private static long id(JsonParser parser, DeserializationContext context, int edge) {
		if (parser.nextToken() != JsonToken.VALUE_NUMBER_INT || parser.getNumberType() != JsonParser.NumberType.INT) {
			notAPair(context, edge);
		}
		return parser.getIntValue();
	}

	private static Edges notAPair(DeserializationContext context, int edge) {
		return context.reportInputMismatch(Edges.class,
				"edge " + edge + " must be a [source, target] pair of integer node ids");
	}

}
