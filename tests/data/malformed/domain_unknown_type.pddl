; The predicate 'at' uses type 'vehicle', which is not declared in :types.
(define (domain logistics)
  (:requirements :strips :typing)
  (:types truck place)
  (:predicates (at ?t - vehicle ?p - place))
  (:action noop
    :parameters (?t - truck)
    :precondition (and)
    :effect (and)))
