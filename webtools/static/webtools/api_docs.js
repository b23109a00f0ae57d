// The API reference page: Swagger UI over webtools' schema. "Try it out" runs as the signed-in user;
// a request that changes something carries Django's CSRF token, as the session API requires.
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  window.SwaggerUIBundle({
    url: root.dataset.schemaUrl,
    dom_id: "#swagger-ui",
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    requestInterceptor: function (request) {
      if (request.method && request.method !== "GET") request.headers["X-CSRFToken"] = root.dataset.csrf;
      return request;
    },
  });
})();
