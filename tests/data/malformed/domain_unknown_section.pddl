; (:preds ...) is not a domain section.
(define (domain bw)
  (:preds (clear ?x))
  (:action noop
    :parameters (?x)
    :precondition (clear ?x)
    :effect (clear ?x)))
