package io.gpumem.docs.examples;

import org.springframework.boot.test.context.SpringBootTest;

/** The fault injection of docs/starter.md, on a test class of a user's service. */
// tag::fault-injection[]
@SpringBootTest(properties = { "gpumem.fault-injection.probability=1", "gpumem.fault-injection.pools=device" })
// end::fault-injection[]
class FaultInjectionExample {

}
