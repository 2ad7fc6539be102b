package io.gpumem.autoconfigure.endpoint;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A web application with nothing but gpumem and actuator, for the endpoint's HTTP tests. */
@SpringBootApplication
class EndpointTestApplication {

}
